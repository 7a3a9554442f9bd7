/* ini.c: the INI reader (see ini.h): the file read whole, then parsed line
 * by line into entries; an open "key =" block names the indented lines
 * that follow it. */
#include "util/ini.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

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

static char *trim_dup(const char *s, size_t n) {
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  return strndup(s, n);
}

static int ini_add(bri_ini *f, const char *section, char *key, char *value, bri_error *err) {
  bri_ini_entry *grown = realloc(f->entries, (f->n + 1) * sizeof *grown);
  char *sec = strdup(section);
  if (!grown || !sec || !key || !value) {
    if (grown) f->entries = grown;
    free(sec);
    free(key);
    free(value);
    return bri_error_set(err, BRI_ENOMEM, "reading %s: out of memory", f->path);
  }
  f->entries = grown;
  f->entries[f->n++] = (bri_ini_entry){sec, key, value};
  return 0;
}

/* Parses text into f; a line that is neither a section, a key = value, a
 * comment nor blank is refused with its line number. */
static int ini_parse(bri_ini *f, char *text, bri_error *err) {
  char section[256] = "";
  char nest[128] = ""; /* open "key =" block, for indented lines */
  int lineno = 0;
  for (char *line = text, *next; line && *line; line = next) {
    lineno++;
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    size_t len = strlen(line);
    if (len && line[len - 1] == '\r') line[--len] = '\0';
    bool indented = len && isspace((unsigned char)line[0]);
    char *p = line;
    while (isspace((unsigned char)*p)) p++;
    if (!*p || *p == '#' || *p == ';') continue;
    if (*p == '[') {
      char *close = strchr(p, ']');
      if (!close) {
        return bri_error_set(err, BRI_EINVAL, "%s line %d: section without ]", f->path, lineno);
      }
      char *name = trim_dup(p + 1, (size_t)(close - p - 1));
      if (!name) return bri_error_set(err, BRI_ENOMEM, "reading %s: out of memory", f->path);
      snprintf(section, sizeof section, "%s", name);
      free(name);
      nest[0] = '\0';
      continue;
    }
    char *eq = strchr(p, '=');
    if (!eq) {
      return bri_error_set(err, BRI_EINVAL, "%s line %d: expected key = value", f->path,
                           lineno);
    }
    char *key = trim_dup(p, (size_t)(eq - p));
    char *value = trim_dup(eq + 1, strlen(eq + 1));
    if (indented && nest[0] && key) {
      bri_strbuf k = BRI_STRBUF_INIT;
      bri_strbuf_printf(&k, "%s.%s", nest, key);
      free(key);
      key = bri_strbuf_take(&k);
    } else if (key && value && !*value) {
      snprintf(nest, sizeof nest, "%s", key);
    } else {
      nest[0] = '\0';
    }
    int rc = ini_add(f, section, key, value, err);
    if (rc) return rc;
  }
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
  char *text = bri_strbuf_take(&b);
  int rc = 0;
  if (failed) rc = bri_error_set(err, BRI_EIO, "reading %s failed", path);
  else if (!text || !f->path) rc = bri_error_set(err, BRI_ENOMEM, "reading %s: out of memory", path);
  else rc = ini_parse(f, text, err);
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

