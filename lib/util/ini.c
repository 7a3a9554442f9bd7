/* ini.c: the INI reader (see ini.h): the text split into lines, each read
 * by the rules of its syntax (aws_line, conf_line) into an entry handed to
 * the caller; bri_ini_read keeps a file's entries in a list. */
#include "util/ini.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

typedef struct parser {
  const char *name;
  bri_ini_entry_fn on_entry;
  void *arg;
  char *section; /* the current section's name */
  int section_line;
  /* BRI_INI_AWS: the open "key =" block ("" when none); BRI_INI_CONF: the
   * key an indented line continues ("" when none) */
  char *last_key;
  int line;
  int *bad_line;
} parser;

static char *rstrip(char *s) {
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
  return s;
}

static char *lskip(char *s) {
  while (isspace((unsigned char)*s)) s++;
  return s;
}

/* BRI_INI_CONF: the first of chars in s, the ; of a " ;" comment, or the
 * end of s. */
static char *find_chars_or_comment(char *s, const char *chars) {
  bool was_space = false;
  while (*s && (!chars || !strchr(chars, *s)) && !(was_space && *s == ';')) {
    was_space = isspace((unsigned char)*s);
    s++;
  }
  return s;
}

static int refuse(parser *p, const char *what, bri_error *err) {
  if (p->bad_line) *p->bad_line = p->line;
  return bri_error_set(err, BRI_EINVAL, "%s line %d: %s", p->name, p->line, what);
}

static int out_of_memory(parser *p, bri_error *err) {
  return bri_error_set(err, BRI_ENOMEM, "reading %s: out of memory", p->name);
}

/* Replaces *slot by a copy of s; -1 out of memory. */
static int replace(char **slot, const char *s) {
  char *copy = strdup(s);
  if (!copy) return -1;
  free(*slot);
  *slot = copy;
  return 0;
}

static int header(parser *p, const char *name, bri_error *err) {
  if (replace(&p->section, name) || replace(&p->last_key, "")) return out_of_memory(p, err);
  p->section_line = p->line;
  return 0;
}

static int emit(parser *p, const char *key, const char *value, bri_error *err) {
  bri_ini_entry e = {p->section, (char *)key, (char *)value, p->line, p->section_line};
  return p->on_entry(p->arg, &e, err);
}

static int aws_line(parser *p, char *line, bri_error *err) {
  bool indented = isspace((unsigned char)line[0]);
  char *s = lskip(line);
  if (!*s || *s == '#' || *s == ';') return 0;
  if (*s == '[') {
    char *close = strchr(s, ']');
    if (!close) return refuse(p, "section without ]", err);
    *close = '\0';
    return header(p, rstrip(lskip(s + 1)), err);
  }
  char *eq = strchr(s, '=');
  if (!eq) return refuse(p, "expected key = value", err);
  *eq = '\0';
  char *key = rstrip(s), *value = rstrip(lskip(eq + 1));
  if (indented && *p->last_key) {
    bri_strbuf nested = BRI_STRBUF_INIT;
    bri_strbuf_printf(&nested, "%s.%s", p->last_key, key);
    char *k = bri_strbuf_take(&nested);
    int rc = k ? emit(p, k, value, err) : out_of_memory(p, err);
    free(k);
    return rc;
  }
  if (replace(&p->last_key, *value ? "" : key)) return out_of_memory(p, err);
  return emit(p, key, value, err);
}

static int conf_line(parser *p, char *line, bri_error *err) {
  char *s = line;
  if (p->line == 1 && !strncmp(s, "\xEF\xBB\xBF", 3)) s += 3;
  s = lskip(rstrip(s));
  bool indented = s > line;
  if (!*s || *s == '#' || *s == ';') return 0;
  char *close = *s == '[' ? strrchr(s, ']') : NULL;
  if (close) {
    *close = '\0';
    return header(p, s + 1, err);
  }
  if (indented && *p->last_key) return emit(p, p->last_key, s, err);
  if (*s == '[') return refuse(p, "section without ]", err);
  char *sep = find_chars_or_comment(s, "=:");
  if (*sep != '=' && *sep != ':') return refuse(p, "expected key = value", err);
  *sep = '\0';
  char *key = rstrip(s), *value = sep + 1;
  *find_chars_or_comment(value, NULL) = '\0';
  if (replace(&p->last_key, key)) return out_of_memory(p, err);
  return emit(p, key, rstrip(lskip(value)), err);
}

int bri_ini_parse(const char *text, size_t len, bri_ini_syntax syntax, const char *name,
                  bri_ini_entry_fn on_entry, void *arg, int *bad_line, bri_error *err) {
  parser p = {.name = name, .on_entry = on_entry, .arg = arg, .bad_line = bad_line};
  if (bad_line) *bad_line = 0;
  char *copy = strndup(text, len);
  p.section = strdup("");
  p.last_key = strdup("");
  int rc = copy && p.section && p.last_key ? 0 : out_of_memory(&p, err);
  for (char *line = copy, *next; !rc && line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    p.line++;
    rc = syntax == BRI_INI_CONF ? conf_line(&p, line, err) : aws_line(&p, line, err);
  }
  free(copy), free(p.section), free(p.last_key);
  return rc;
}

void bri_ini_clear(bri_ini *f) {
  for (size_t i = 0; i < f->n; i++) {
    free(f->entries[i].section);
    free(f->entries[i].key);
    free(f->entries[i].value);
  }
  free(f->entries);
  free(f->path);
  memset(f, 0, sizeof *f);
}

/* bri_ini_read's bri_ini_entry_fn: keeps a copy of e. */
static int keep_entry(void *arg, const bri_ini_entry *e, bri_error *err) {
  bri_ini *f = arg;
  bri_ini_entry *grown = realloc(f->entries, (f->n + 1) * sizeof *grown);
  if (grown) f->entries = grown;
  bri_ini_entry copy = {strdup(e->section), strdup(e->key), strdup(e->value), e->line, e->section_line};
  if (!grown || !copy.section || !copy.key || !copy.value) {
    free(copy.section), free(copy.key), free(copy.value);
    return bri_error_set(err, BRI_ENOMEM, "reading %s: out of memory", f->path);
  }
  f->entries[f->n++] = copy;
  return 0;
}

int bri_ini_read(const char *path, bri_ini *f, bri_error *err) {
  memset(f, 0, sizeof *f);
  FILE *fp = fopen(path, "r");
  if (!fp) {
    if (errno == ENOENT) return 0;
    return bri_error_errno(err, "opening", path);
  }
  f->path = strdup(path);
  bri_strbuf b = BRI_STRBUF_INIT;
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0) bri_strbuf_add(&b, chunk, n);
  int failed = ferror(fp);
  fclose(fp);
  size_t len = b.len;
  char *text = bri_strbuf_take(&b);
  int rc = 0;
  if (failed) rc = bri_error_set(err, BRI_EIO, "reading %s failed", path);
  else if (!text || !f->path) rc = bri_error_set(err, BRI_ENOMEM, "reading %s: out of memory", path);
  else rc = bri_ini_parse(text, len, BRI_INI_AWS, path, keep_entry, f, NULL, err);
  free(text);
  if (rc) bri_ini_clear(f);
  return rc;
}

const char *bri_ini_get(const bri_ini *f, const char *section, const char *key) {
  for (size_t i = 0; i < f->n; i++) {
    if (!strcmp(f->entries[i].section, section) && !strcmp(f->entries[i].key, key)) {
      return f->entries[i].value;
    }
  }
  return NULL;
}
