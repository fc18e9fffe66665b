/*
 * The few glibc-only symbols that Debian's libstdc++.so.6 and libgcc_s.so.1 import, for loading them under musl in
 * test/integration/install/musl.test.ts (what Alpine's gcompat does, cut to these). Not shipped: on Alpine the musl
 * builds use Alpine's own libstdc++ and libgcc.
 */
#include <locale.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

char __libc_single_threaded = 0;

uint32_t arc4random(void) {
  uint32_t v = 0;
  if (getrandom(&v, sizeof v, 0) != sizeof v) abort();
  return v;
}

size_t __strftime_l(char *s, size_t n, const char *f, const struct tm *t, locale_t l) { return strftime_l(s, n, f, t, l); }

/* -1: not found, so libgcc's unwinder falls back to dl_iterate_phdr, which musl has */
int _dl_find_object(void *pc, void *result) {
  (void)pc;
  (void)result;
  return -1;
}

/* libgcc's CPU feature data: all zero means no optional feature is used */
struct { unsigned int vendor, type, subtype, features[1]; } __cpu_model;
int __cpu_indicator_init(void) { return 0; }

/* thread_local destructors: each runs at its thread's exit through a pthread key of its own */
struct dtor {
  void (*fn)(void *);
  void *obj;
};
static void run_dtor(void *p) {
  struct dtor *d = p;
  d->fn(d->obj);
  free(d);
}
int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso) {
  (void)dso;
  pthread_key_t key;
  struct dtor *d = malloc(sizeof *d);
  if (!d) return -1;
  d->fn = fn;
  d->obj = obj;
  if (pthread_key_create(&key, run_dtor)) {
    free(d);
    return -1;
  }
  return pthread_setspecific(key, d);
}
