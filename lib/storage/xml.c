/* xml.c: expat into a tree of names and text (see xml.h). The tree is
 * built on a stack of open elements; character data is appended to the
 * innermost open element. Limits (depth, size) keep a hostile or broken
 * server from making us allocate without bound. */
#include "storage/xml.h"

#include <expat.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define XML_MAX_DEPTH 32
#define XML_MAX_BYTES (64u << 20)

typedef struct builder {
  XML_Parser parser;
  bri_xml_node *root;
  bri_xml_node *stack[XML_MAX_DEPTH];
  bri_xml_node *last_child[XML_MAX_DEPTH]; /* tail of each open element's children */
  bri_strbuf text[XML_MAX_DEPTH];
  int depth;
  const char *failure; /* set when we stop the parser ourselves */
} builder;

static void stop(builder *b, const char *why) {
  if (!b->failure) b->failure = why;
  XML_StopParser(b->parser, XML_FALSE);
}

static void on_start(void *ud, const XML_Char *name, const XML_Char **attrs) {
  (void)attrs;
  builder *b = ud;
  if (b->failure) return;
  if (b->depth == XML_MAX_DEPTH) {
    stop(b, "nested too deeply");
    return;
  }
  const char *local = strrchr(name, '|'); /* namespace separator */
  bri_xml_node *n = calloc(1, sizeof *n);
  if (!n || !(n->name = strdup(local ? local + 1 : name))) {
    free(n);
    stop(b, "out of memory");
    return;
  }
  if (b->depth == 0) {
    if (b->root) {
      bri_xml_free(n);
      stop(b, "two document elements");
      return;
    }
    b->root = n;
  } else {
    int p = b->depth - 1;
    if (b->last_child[p]) b->last_child[p]->next = n;
    else b->stack[p]->child = n;
    b->last_child[p] = n;
  }
  b->stack[b->depth] = n;
  b->last_child[b->depth] = NULL;
  b->depth++;
}

static void on_end(void *ud, const XML_Char *name) {
  (void)name;
  builder *b = ud;
  if (b->failure || b->depth == 0) return;
  b->depth--;
  char *t = bri_strbuf_take(&b->text[b->depth]);
  if (!t) {
    stop(b, "out of memory");
    return;
  }
  b->stack[b->depth]->text = t;
}

static void on_text(void *ud, const XML_Char *s, int len) {
  builder *b = ud;
  if (b->failure || b->depth == 0) return;
  bri_strbuf_add(&b->text[b->depth - 1], s, (size_t)len);
}

int bri_xml_parse(const char *data, size_t len, const char *what, bri_xml_node **root,
                  bri_error *err) {
  *root = NULL;
  if (len > XML_MAX_BYTES) {
    return bri_error_set(err, BRI_ECORRUPT, "%s: XML of %zu bytes is over the %u byte limit",
                         what, len, XML_MAX_BYTES);
  }
  builder b;
  memset(&b, 0, sizeof b);
  b.parser = XML_ParserCreateNS(NULL, '|');
  if (!b.parser) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", what);
  XML_SetUserData(b.parser, &b);
  XML_SetElementHandler(b.parser, on_start, on_end);
  XML_SetCharacterDataHandler(b.parser, on_text);
  int rc = 0;
  if (XML_Parse(b.parser, data, (int)len, XML_TRUE) != XML_STATUS_OK || b.failure) {
    rc = bri_error_set(err, BRI_ECORRUPT, "%s: XML %s at line %lu", what,
                       b.failure ? b.failure : XML_ErrorString(XML_GetErrorCode(b.parser)),
                       (unsigned long)XML_GetCurrentLineNumber(b.parser));
  } else if (!b.root) {
    rc = bri_error_set(err, BRI_ECORRUPT, "%s: XML without a document element", what);
  }
  for (int i = 0; i < XML_MAX_DEPTH; i++) bri_strbuf_clear(&b.text[i]);
  XML_ParserFree(b.parser);
  if (rc) bri_xml_free(b.root);
  else *root = b.root;
  return rc;
}

void bri_xml_free(bri_xml_node *n) {
  while (n) {
    bri_xml_node *next = n->next;
    bri_xml_free(n->child);
    free(n->name);
    free(n->text);
    free(n);
    n = next;
  }
}

const bri_xml_node *bri_xml_child(const bri_xml_node *n, const char *name) {
  for (const bri_xml_node *c = n ? n->child : NULL; c; c = c->next) {
    if (!strcmp(c->name, name)) return c;
  }
  return NULL;
}

const char *bri_xml_text(const bri_xml_node *n, const char *name) {
  const bri_xml_node *c = bri_xml_child(n, name);
  return c ? (c->text ? c->text : "") : NULL;
}

const bri_xml_node *bri_xml_next_same(const bri_xml_node *n) {
  for (const bri_xml_node *c = n->next; c; c = c->next) {
    if (!strcmp(c->name, n->name)) return c;
  }
  return NULL;
}

void bri_xml_escape(bri_strbuf *b, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '&': bri_strbuf_puts(b, "&amp;"); break;
    case '<': bri_strbuf_puts(b, "&lt;"); break;
    case '>': bri_strbuf_puts(b, "&gt;"); break;
    case '"': bri_strbuf_puts(b, "&quot;"); break;
    case '\'': bri_strbuf_puts(b, "&apos;"); break;
    default: bri_strbuf_putc(b, *s);
    }
  }
}
