/* xml.h: the XML object stores speak, read into a small tree and written
 * with escaping.
 *
 * Their answers (listing pages, errors, multipart results, delete results)
 * are small, flat documents, so they are parsed (expat) into a tree of
 * element names and text, and read with child lookups; namespaces are
 * dropped from names ("ListBucketResult", not the xmlns URI). A document
 * deeper than 32 levels or over 64 MiB is refused: nothing a store sends
 * comes close. */
#ifndef BRI_STORAGE_XML_H
#define BRI_STORAGE_XML_H

#include <stddef.h>

#include "util/error.h"
#include "util/strbuf.h"

typedef struct bri_xml_node {
  char *name;
  char *text; /* concatenated character data ("" when none) */
  struct bri_xml_node *child; /* first child */
  struct bri_xml_node *next;  /* next sibling */
} bri_xml_node;

/* Parses len bytes; *root is the document element. what names the document in
 * errors ("ListObjectsV2 answer for s3://b/p"). */
int bri_xml_parse(const char *data, size_t len, const char *what, bri_xml_node **root,
                  bri_error *err);
void bri_xml_free(bri_xml_node *n);

/* First child element named name, or NULL. */
const bri_xml_node *bri_xml_child(const bri_xml_node *n, const char *name);
/* Text of the first child named name, or NULL when there is none. */
const char *bri_xml_text(const bri_xml_node *n, const char *name);
/* The next sibling after n with the same name, or NULL (iterate repeats). */
const bri_xml_node *bri_xml_next_same(const bri_xml_node *n);

/* Appends s with & < > " ' escaped. */
void bri_xml_escape(bri_strbuf *b, const char *s);

#endif
