/* Whether this CPU runs what an extension built with -march=native on the installing machine
 * used, and multiplies and adds as modules built here do (with one rounding or two): the
 * installed kernels' extensions (conv_kernels.c, array_math.c) offer their code only then. */
static int
runs_here(void)
{
    __builtin_cpu_init();
#if defined(__x86_64__) || defined(__i386__)
#ifdef __AVX512F__
    if (!__builtin_cpu_supports("avx512f")) return 0;
#endif
#ifdef __AVX2__
    if (!__builtin_cpu_supports("avx2")) return 0;
#endif
#ifdef __AVX__
    if (!__builtin_cpu_supports("avx")) return 0;
#endif
#ifdef __FMA__
    if (!__builtin_cpu_supports("fma")) return 0;
#else
    if (__builtin_cpu_supports("fma")) return 0;
#endif
#endif
    return 1;
}
