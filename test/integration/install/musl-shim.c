/*
 * The few glibc-only symbols that Debian's libstdc++.so.6 and libgcc_s.so.1 import, for loading them under musl in
 * test/integration/install/musl.test.ts (x86_64, built with musl-gcc) and musl-arm64.test.ts (aarch64, built with
 * Debian's cross gcc and -nostdlib: the undefined libc calls bind to musl's libc when loaded). What Alpine's gcompat
 * does, cut to these. No libc headers, so one file builds for either CPU without a musl sysroot; the declarations
 * below match musl's and glibc's ABI on x86_64 and aarch64. Not shipped: on Alpine the musl builds use Alpine's own
 * libstdc++ and libgcc.
 */
typedef __SIZE_TYPE__ size_t;
typedef unsigned int pthread_key_t;
struct tm;
void abort(void);
void *malloc(size_t n);
void free(void *p);
long getrandom(void *buf, size_t n, unsigned int flags);
size_t strftime_l(char *s, size_t n, const char *f, const struct tm *t, void *l);
unsigned long getauxval(unsigned long type);
int pthread_key_create(pthread_key_t *key, void (*dtor)(void *));
int pthread_setspecific(pthread_key_t key, const void *value);

char __libc_single_threaded = 0;

unsigned int arc4random(void) {
  unsigned int v = 0;
  if (getrandom(&v, sizeof v, 0) != sizeof v) abort();
  return v;
}

size_t __strftime_l(char *s, size_t n, const char *f, const struct tm *t, void *l) { return strftime_l(s, n, f, t, l); }

/* aarch64's libstdc++ reads the CPU's hardware capabilities through glibc's internal name */
unsigned long __getauxval(unsigned long type) { return getauxval(type); }

/* -1: not found, so libgcc's unwinder falls back to dl_iterate_phdr, which musl has */
int _dl_find_object(void *pc, void *result) {
  (void)pc;
  (void)result;
  return -1;
}

/* x86_64 libgcc's CPU feature data: all zero means no optional feature is used */
struct {
  unsigned int vendor, type, subtype, features[1];
} __cpu_model;
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
