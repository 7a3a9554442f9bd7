/* typename.c: apache-arrow's DataType.toString() of a manifest field (see
 * typename.h). Lance's logical types name the Arrow types; nested types
 * (struct, list, map, fixed-size list, dictionary) are written from the
 * field's children in the manifest, as the JavaScript library writes them. */
#include "scan/typename.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char *unit_name(const char *u) {
  if (!strcmp(u, "s")) return "SECOND";
  if (!strcmp(u, "ms")) return "MILLISECOND";
  if (!strcmp(u, "us")) return "MICROSECOND";
  if (!strcmp(u, "ns")) return "NANOSECOND";
  return u;
}

/* A logical type that needs no child fields; false if it does. */
static bool simple_type_name(FILE *o, const char *lt) {
  static const char *const simple[][2] = {
      {"null", "Null"},          {"bool", "Bool"},           {"int8", "Int8"},
      {"int16", "Int16"},        {"int32", "Int32"},         {"int64", "Int64"},
      {"uint8", "Uint8"},        {"uint16", "Uint16"},       {"uint32", "Uint32"},
      {"uint64", "Uint64"},      {"halffloat", "Float16"},   {"float", "Float32"},
      {"double", "Float64"},     {"string", "Utf8"},         {"large_string", "LargeUtf8"},
      {"binary", "Binary"},      {"large_binary", "LargeBinary"}, {"json", "LargeBinary"},
      {"date32:day", "Date32<DAY>"}, {"date64:ms", "Date64<MILLISECOND>"},
      {"lance.bfloat16", "FixedSizeBinary[2]"},
  };
  for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
    if (!strcmp(lt, simple[i][0])) {
      fputs(simple[i][1], o);
      return true;
    }
  char a[64], b[128];
  int p, s, n;
  if (sscanf(lt, "time%d:%63s", &n, a) == 2 && (n == 32 || n == 64)) {
    fprintf(o, "Time%d<%s>", n, unit_name(a));
    return true;
  }
  if (!strncmp(lt, "timestamp:", 10)) {
    const char *u = lt + 10, *c = strchr(u, ':');
    if (!c) return false;
    snprintf(a, sizeof a, "%.*s", (int)(c - u), u);
    if (!strcmp(c + 1, "-") || !c[1]) fprintf(o, "Timestamp<%s>", unit_name(a));
    else fprintf(o, "Timestamp<%s, %s>", unit_name(a), c + 1);
    return true;
  }
  if (sscanf(lt, "duration:%63s", a) == 1) {
    fprintf(o, "Duration<%s>", unit_name(a));
    return true;
  }
  if (sscanf(lt, "decimal:%d:%d:%d", &n, &p, &s) == 3) {
    fprintf(o, "Decimal[%de%s%d]", p, s > 0 ? "+" : "", s);
    return true;
  }
  if (sscanf(lt, "fixed_size_binary:%d", &n) == 1) {
    fprintf(o, "FixedSizeBinary[%d]", n);
    return true;
  }
  if (!strncmp(lt, "fixed_size_list:", 16)) { /* fixed_size_list:<inner>:<n> */
    const char *inner = lt + 16, *last = strrchr(inner, ':');
    if (!last || last == inner) return false;
    snprintf(b, sizeof b, "%.*s", (int)(last - inner), inner);
    fprintf(o, "FixedSizeList[%s]<", last + 1);
    if (!simple_type_name(o, b)) fputs(b, o);
    fputc('>', o);
    return true;
  }
  if (!strncmp(lt, "dict:", 5)) { /* dict:<value>:<index>:<ordered> */
    const char *v = lt + 5, *ord = strrchr(v, ':');
    if (!ord || ord == v) return false;
    const char *idx = ord - 1;
    while (idx > v && *idx != ':') idx--;
    if (idx == v) return false;
    snprintf(a, sizeof a, "%.*s", (int)(ord - idx - 1), idx + 1);
    snprintf(b, sizeof b, "%.*s", (int)(idx - v), v);
    fputs("Dictionary<", o);
    if (!simple_type_name(o, a)) fputs(a, o);
    fputs(", ", o);
    if (!simple_type_name(o, b)) fputs(b, o);
    fputc('>', o);
    return true;
  }
  return false;
}

static void type_name(FILE *o, Lance__File__Field *const *fs, size_t n, size_t i, int depth) {
  const Lance__File__Field *f = fs[i];
  const char *lt = f->logical_type ? f->logical_type : "";
  size_t kids[256], nk = 0;
  for (size_t j = i + 1; j < n && nk < 256; j++)
    if (fs[j]->parent_id == f->id) kids[nk++] = j;
  if (depth > 64) {
    fputs(lt, o);
    return;
  }
  if (!strcmp(lt, "struct")) {
    fputs("Struct<{", o);
    for (size_t k = 0; k < nk; k++) {
      fprintf(o, "%s%s:", k ? ", " : "", fs[kids[k]]->name ? fs[kids[k]]->name : "");
      type_name(o, fs, n, kids[k], depth + 1);
    }
    fputs("}>", o);
  } else if (!strncmp(lt, "list", 4) || !strncmp(lt, "large_list", 10)) {
    fputs(lt[0] == 'l' && lt[1] == 'a' ? "LargeList<" : "List<", o);
    if (nk) type_name(o, fs, n, kids[0], depth + 1);
    fputc('>', o);
  } else if (!strcmp(lt, "map")) {
    fputs("Map<{", o);
    if (nk) { /* the entries struct's children */
      size_t e = kids[0], c = 0;
      for (size_t j = e + 1; j < n; j++)
        if (fs[j]->parent_id == fs[e]->id) {
          fprintf(o, "%s%s:", c++ ? ", " : "", fs[j]->name ? fs[j]->name : "");
          type_name(o, fs, n, j, depth + 1);
        }
    }
    fputs("}>", o);
  } else if (!simple_type_name(o, lt)) {
    fputs(lt, o);
  }
}

char *bri_scan_type_name(const Lance__Table__Manifest *m, size_t i) {
  char *s = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&s, &len);
  if (!o) return NULL;
  type_name(o, m->fields, m->n_fields, i, 0);
  fclose(o);
  return s;
}

