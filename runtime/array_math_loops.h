/* codegen/array_math.py's loops for runtime/array_math.c, written by
   `python -m codegen.array_math`: not to be edited */
#define tracer_run array_math_run_f32
/* tracer: eager ops over arrays of float (codegen/array_math.py) */
#include <math.h>
#include <stdint.h>
#if defined(__GNUC__)
#define TR_INLINE __attribute__((always_inline))
#else
#define TR_INLINE
#endif
#define TR_IN_UNIT 1
#ifdef TR_UNIT
#define TR_PART __attribute__((visibility("hidden")))
#else
#define TR_PART static
#endif
#pragma omp declare simd notinbranch
__attribute__((const)) float erff(float);
#pragma omp declare simd notinbranch
__attribute__((const)) float erfcf(float);
static inline TR_INLINE float tr_gelu_f32(float x) { return (float)0.5 * x * erfcf(x * (float)-0.7071067811865476); }
#pragma omp declare simd notinbranch
__attribute__((const)) float expf(float);
static inline TR_INLINE float tr_exp_f32(float x) { const float low = sizeof(float) == 4 ? (float)-87 : (float)-708; const float shift = x < low ? (float)64 : 0; const float scale = x < low ? (float)1.6038108905486378e-28 : 1; float arg = x + shift; arg = arg < low ? low : arg; return expf(arg) * scale; }
static inline TR_INLINE float tr_gelu_slope_f32(float x) { return (float)0.5 * erfcf(x * (float)-0.7071067811865476) + x * (tr_exp_f32((float)-0.5 * x * x) * (float)0.3989422804014327); }
#pragma omp declare simd notinbranch
__attribute__((const)) float sinf(float);
#pragma omp declare simd notinbranch
__attribute__((const)) float cosf(float);
#pragma omp declare simd notinbranch
__attribute__((const)) float logf(float);
#pragma omp declare simd notinbranch
__attribute__((const)) float tanhf(float);
TR_PART void erf_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out);
TR_PART void erfc_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out);
TR_PART void gelu_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out);
TR_PART void gelu_grad_f32(int64_t size, int64_t row, const float *restrict x0, const float *restrict x1, float *restrict out);
TR_PART void sigmoid_grad_f32(int64_t size, int64_t row, const float *restrict x0, const float *restrict x1, float *restrict out);
TR_PART void tanh_grad_f32(int64_t size, int64_t row, const float *restrict x0, const float *restrict x1, float *restrict out);
TR_PART void sin_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out);
TR_PART void cos_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out);
TR_PART void exp_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out);
TR_PART void log_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out);
TR_PART void tanh_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out);
TR_PART void softmax_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out);
TR_PART void softmax_backprop_f32(int64_t size, int64_t row, const float *restrict x0, const float *restrict x1, float *restrict out);
TR_PART void cross_entropy_f32(int64_t size, int64_t row, const float *restrict x0, const float *restrict x1, float *restrict out);
TR_PART void cross_entropy_backprop_f32(int64_t size, int64_t row, const float *restrict x0, const float *restrict x1, float *restrict out);
#if TR_IN_UNIT  /* work 3602 at 1801 of 64473 */
TR_PART void erf_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (float)(erff(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 3604 at 5404 of 64473 */
TR_PART void erfc_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (float)(erfcf(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 3610 at 9011 of 64473 */
TR_PART void gelu_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (float)(tr_gelu_f32(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 3657 at 12644 of 64473 */
TR_PART void gelu_grad_f32(int64_t size, int64_t row, const float *restrict x0, const float *restrict x1, float *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (float)((x1[i] * tr_gelu_slope_f32(x0[i])));
    }
}
#endif
#if TR_IN_UNIT  /* work 3657 at 16301 of 64473 */
TR_PART void sigmoid_grad_f32(int64_t size, int64_t row, const float *restrict x0, const float *restrict x1, float *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (float)((x1[i] * (x0[i] * (1 - x0[i]))));
    }
}
#endif
#if TR_IN_UNIT  /* work 3652 at 19956 of 64473 */
TR_PART void tanh_grad_f32(int64_t size, int64_t row, const float *restrict x0, const float *restrict x1, float *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (float)((x1[i] * (1 - x0[i] * x0[i])));
    }
}
#endif
#if TR_IN_UNIT  /* work 3602 at 23583 of 64473 */
TR_PART void sin_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (float)(sinf(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 3602 at 27185 of 64473 */
TR_PART void cos_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (float)(cosf(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 3608 at 30790 of 64473 */
TR_PART void exp_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (float)(tr_exp_f32(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 3602 at 34395 of 64473 */
TR_PART void log_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (float)(logf(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 3604 at 37998 of 64473 */
TR_PART void tanh_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (float)(tanhf(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 7063 at 43331 of 64473 */
TR_PART void softmax_f32(int64_t size, int64_t row, const float *restrict x0, float *restrict out) {
    const int64_t n = row, rows = n ? size / n : 0;
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t r = 0; r < rows; r++) {
        const float *restrict row = x0 + r * n;
        float *restrict o = out + r * n;
        float peak = -INFINITY;
        #pragma omp simd reduction(max:peak)
        for (int64_t j = 0; j < n; j++) peak = (float)row[j] > peak ? (float)row[j] : peak;
        float total = 0;
        #pragma omp simd reduction(+:total)
        for (int64_t j = 0; j < n; j++) {
            const float e = tr_exp_f32((float)row[j] - peak);
            o[j] = (float)e;
            total += e;
        }
        #pragma omp simd
        for (int64_t j = 0; j < n; j++) o[j] = (float)((float)o[j] / total);
    }
}
#endif
#if TR_IN_UNIT  /* work 5376 at 49551 of 64473 */
TR_PART void softmax_backprop_f32(int64_t size, int64_t row, const float *restrict x0, const float *restrict x1, float *restrict out) {
    const int64_t n = row, rows = n ? size / n : 0;
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t r = 0; r < rows; r++) {
        const float *restrict yr = x0 + r * n, *restrict vr = x1 + r * n;
        float dot = 0;
        #pragma omp simd reduction(+:dot)
        for (int64_t j = 0; j < n; j++) dot += (float)vr[j] * (float)yr[j];
        float *restrict o = out + r * n;
        #pragma omp simd
        for (int64_t j = 0; j < n; j++) o[j] = (float)((float)yr[j] * ((float)vr[j] - dot));
    }
}
#endif
#if TR_IN_UNIT  /* work 5499 at 54988 of 64473 */
TR_PART void cross_entropy_f32(int64_t size, int64_t row, const float *restrict x0, const float *restrict x1, float *restrict out) {
    const int64_t n = row, rows = n ? size / n : 0;
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t r = 0; r < rows; r++) {
        const float *restrict row = x0 + r * n;
        const int64_t label = (int64_t)x1[r];
        float peak = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
            const float v = (float)row[j];
            peak = (v > peak || v != v) ? v : peak;
        }
        double total = 0;
        #pragma omp simd reduction(+:total)
        for (int64_t j = 0; j < n; j++) total += tr_exp_f32((float)row[j] - peak);
        out[r] = (float)((float)log(total) - ((float)row[label] - peak));
    }
}
#endif
#if TR_IN_UNIT  /* work 6185 at 60830 of 64473 */
TR_PART void cross_entropy_backprop_f32(int64_t size, int64_t row, const float *restrict x0, const float *restrict x1, float *restrict out) {
    const int64_t n = row, rows = n ? size / n : 0;
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t r = 0; r < rows; r++) {
        const float *restrict row = x0 + r * n;
        const int64_t label = (int64_t)x1[r];
        float peak = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
            const float v = (float)row[j];
            peak = (v > peak || v != v) ? v : peak;
        }
        double total = 0;
        #pragma omp simd reduction(+:total)
        for (int64_t j = 0; j < n; j++) total += tr_exp_f32((float)row[j] - peak);
        float *restrict o = out + r * n;
        const float sum = (float)total;
        #pragma omp simd
        for (int64_t j = 0; j < n; j++) o[j] = (float)(tr_exp_f32((float)row[j] - peak) / sum);
        o[label] = (float)((float)o[label] - 1);
    }
}
#endif
#if TR_IN_UNIT  /* work 550 at 64198 of 64473 */
int tracer_run(char **args) {
    const int64_t function = *(const int64_t *)args[0];
    const int64_t size = *(const int64_t *)args[1], row = *(const int64_t *)args[2];
    switch (function) {
    case 0: erf_f32(size, row, (const float *)args[3], (float *)args[4]); break;
    case 1: erfc_f32(size, row, (const float *)args[3], (float *)args[4]); break;
    case 2: gelu_f32(size, row, (const float *)args[3], (float *)args[4]); break;
    case 3: gelu_grad_f32(size, row, (const float *)args[3], (const float *)args[4], (float *)args[5]); break;
    case 4: sigmoid_grad_f32(size, row, (const float *)args[3], (const float *)args[4], (float *)args[5]); break;
    case 5: tanh_grad_f32(size, row, (const float *)args[3], (const float *)args[4], (float *)args[5]); break;
    case 6: sin_f32(size, row, (const float *)args[3], (float *)args[4]); break;
    case 7: cos_f32(size, row, (const float *)args[3], (float *)args[4]); break;
    case 8: exp_f32(size, row, (const float *)args[3], (float *)args[4]); break;
    case 9: log_f32(size, row, (const float *)args[3], (float *)args[4]); break;
    case 10: tanh_f32(size, row, (const float *)args[3], (float *)args[4]); break;
    case 11: softmax_f32(size, row, (const float *)args[3], (float *)args[4]); break;
    case 12: softmax_backprop_f32(size, row, (const float *)args[3], (const float *)args[4], (float *)args[5]); break;
    case 13: cross_entropy_f32(size, row, (const float *)args[3], (const float *)args[4], (float *)args[5]); break;
    case 14: cross_entropy_backprop_f32(size, row, (const float *)args[3], (const float *)args[4], (float *)args[5]); break;
    }
    return 0;
}
#endif
#undef tracer_run
#define tracer_run array_math_run_f64
/* tracer: eager ops over arrays of double (codegen/array_math.py) */
#include <math.h>
#include <stdint.h>
#if defined(__GNUC__)
#define TR_INLINE __attribute__((always_inline))
#else
#define TR_INLINE
#endif
#define TR_IN_UNIT 1
#ifdef TR_UNIT
#define TR_PART __attribute__((visibility("hidden")))
#else
#define TR_PART static
#endif
#pragma omp declare simd notinbranch
__attribute__((const)) double erf(double);
#pragma omp declare simd notinbranch
__attribute__((const)) double erfc(double);
static inline TR_INLINE double tr_gelu_f64(double x) { return (double)0.5 * x * erfc(x * (double)-0.7071067811865476); }
#pragma omp declare simd notinbranch
__attribute__((const)) double exp(double);
static inline TR_INLINE double tr_exp_f64(double x) { const double low = sizeof(double) == 4 ? (double)-87 : (double)-708; const double shift = x < low ? (double)64 : 0; const double scale = x < low ? (double)1.6038108905486378e-28 : 1; double arg = x + shift; arg = arg < low ? low : arg; return exp(arg) * scale; }
static inline TR_INLINE double tr_gelu_slope_f64(double x) { return (double)0.5 * erfc(x * (double)-0.7071067811865476) + x * (tr_exp_f64((double)-0.5 * x * x) * (double)0.3989422804014327); }
#pragma omp declare simd notinbranch
__attribute__((const)) double sin(double);
#pragma omp declare simd notinbranch
__attribute__((const)) double cos(double);
#pragma omp declare simd notinbranch
__attribute__((const)) double log(double);
#pragma omp declare simd notinbranch
__attribute__((const)) double tanh(double);
TR_PART void erf_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out);
TR_PART void erfc_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out);
TR_PART void gelu_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out);
TR_PART void gelu_grad_f64(int64_t size, int64_t row, const double *restrict x0, const double *restrict x1, double *restrict out);
TR_PART void sigmoid_grad_f64(int64_t size, int64_t row, const double *restrict x0, const double *restrict x1, double *restrict out);
TR_PART void tanh_grad_f64(int64_t size, int64_t row, const double *restrict x0, const double *restrict x1, double *restrict out);
TR_PART void sin_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out);
TR_PART void cos_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out);
TR_PART void exp_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out);
TR_PART void log_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out);
TR_PART void tanh_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out);
TR_PART void softmax_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out);
TR_PART void softmax_backprop_f64(int64_t size, int64_t row, const double *restrict x0, const double *restrict x1, double *restrict out);
TR_PART void cross_entropy_f64(int64_t size, int64_t row, const double *restrict x0, const double *restrict x1, double *restrict out);
TR_PART void cross_entropy_backprop_f64(int64_t size, int64_t row, const double *restrict x0, const double *restrict x1, double *restrict out);
#if TR_IN_UNIT  /* work 3604 at 1802 of 64565 */
TR_PART void erf_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (double)(erf(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 3606 at 5407 of 64565 */
TR_PART void erfc_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (double)(erfc(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 3613 at 9016 of 64565 */
TR_PART void gelu_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (double)(tr_gelu_f64(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 3661 at 12653 of 64565 */
TR_PART void gelu_grad_f64(int64_t size, int64_t row, const double *restrict x0, const double *restrict x1, double *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (double)((x1[i] * tr_gelu_slope_f64(x0[i])));
    }
}
#endif
#if TR_IN_UNIT  /* work 3661 at 16314 of 64565 */
TR_PART void sigmoid_grad_f64(int64_t size, int64_t row, const double *restrict x0, const double *restrict x1, double *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (double)((x1[i] * (x0[i] * (1 - x0[i]))));
    }
}
#endif
#if TR_IN_UNIT  /* work 3656 at 19973 of 64565 */
TR_PART void tanh_grad_f64(int64_t size, int64_t row, const double *restrict x0, const double *restrict x1, double *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (double)((x1[i] * (1 - x0[i] * x0[i])));
    }
}
#endif
#if TR_IN_UNIT  /* work 3604 at 23603 of 64565 */
TR_PART void sin_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (double)(sin(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 3604 at 27207 of 64565 */
TR_PART void cos_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (double)(cos(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 3611 at 30814 of 64565 */
TR_PART void exp_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (double)(tr_exp_f64(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 3604 at 34422 of 64565 */
TR_PART void log_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (double)(log(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 3606 at 38027 of 64565 */
TR_PART void tanh_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out) {
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t start = 0; start < size; start += 1024) {
        const int64_t end = start + 1024 < size ? start + 1024 : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = (double)(tanh(x0[i]));
    }
}
#endif
#if TR_IN_UNIT  /* work 7076 at 43368 of 64565 */
TR_PART void softmax_f64(int64_t size, int64_t row, const double *restrict x0, double *restrict out) {
    const int64_t n = row, rows = n ? size / n : 0;
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t r = 0; r < rows; r++) {
        const double *restrict row = x0 + r * n;
        double *restrict o = out + r * n;
        double peak = -INFINITY;
        #pragma omp simd reduction(max:peak)
        for (int64_t j = 0; j < n; j++) peak = (double)row[j] > peak ? (double)row[j] : peak;
        double total = 0;
        #pragma omp simd reduction(+:total)
        for (int64_t j = 0; j < n; j++) {
            const double e = tr_exp_f64((double)row[j] - peak);
            o[j] = (double)e;
            total += e;
        }
        #pragma omp simd
        for (int64_t j = 0; j < n; j++) o[j] = (double)((double)o[j] / total);
    }
}
#endif
#if TR_IN_UNIT  /* work 5387 at 49599 of 64565 */
TR_PART void softmax_backprop_f64(int64_t size, int64_t row, const double *restrict x0, const double *restrict x1, double *restrict out) {
    const int64_t n = row, rows = n ? size / n : 0;
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t r = 0; r < rows; r++) {
        const double *restrict yr = x0 + r * n, *restrict vr = x1 + r * n;
        double dot = 0;
        #pragma omp simd reduction(+:dot)
        for (int64_t j = 0; j < n; j++) dot += (double)vr[j] * (double)yr[j];
        double *restrict o = out + r * n;
        #pragma omp simd
        for (int64_t j = 0; j < n; j++) o[j] = (double)((double)yr[j] * ((double)vr[j] - dot));
    }
}
#endif
#if TR_IN_UNIT  /* work 5510 at 55048 of 64565 */
TR_PART void cross_entropy_f64(int64_t size, int64_t row, const double *restrict x0, const double *restrict x1, double *restrict out) {
    const int64_t n = row, rows = n ? size / n : 0;
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t r = 0; r < rows; r++) {
        const double *restrict row = x0 + r * n;
        const int64_t label = (int64_t)x1[r];
        double peak = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
            const double v = (double)row[j];
            peak = (v > peak || v != v) ? v : peak;
        }
        double total = 0;
        #pragma omp simd reduction(+:total)
        for (int64_t j = 0; j < n; j++) total += tr_exp_f64((double)row[j] - peak);
        out[r] = (double)((double)log(total) - ((double)row[label] - peak));
    }
}
#endif
#if TR_IN_UNIT  /* work 6200 at 60903 of 64565 */
TR_PART void cross_entropy_backprop_f64(int64_t size, int64_t row, const double *restrict x0, const double *restrict x1, double *restrict out) {
    const int64_t n = row, rows = n ? size / n : 0;
    #pragma omp parallel for schedule(static) if(size >= 131072)
    for (int64_t r = 0; r < rows; r++) {
        const double *restrict row = x0 + r * n;
        const int64_t label = (int64_t)x1[r];
        double peak = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
            const double v = (double)row[j];
            peak = (v > peak || v != v) ? v : peak;
        }
        double total = 0;
        #pragma omp simd reduction(+:total)
        for (int64_t j = 0; j < n; j++) total += tr_exp_f64((double)row[j] - peak);
        double *restrict o = out + r * n;
        const double sum = (double)total;
        #pragma omp simd
        for (int64_t j = 0; j < n; j++) o[j] = (double)(tr_exp_f64((double)row[j] - peak) / sum);
        o[label] = (double)((double)o[label] - 1);
    }
}
#endif
#if TR_IN_UNIT  /* work 562 at 64284 of 64565 */
int tracer_run(char **args) {
    const int64_t function = *(const int64_t *)args[0];
    const int64_t size = *(const int64_t *)args[1], row = *(const int64_t *)args[2];
    switch (function) {
    case 0: erf_f64(size, row, (const double *)args[3], (double *)args[4]); break;
    case 1: erfc_f64(size, row, (const double *)args[3], (double *)args[4]); break;
    case 2: gelu_f64(size, row, (const double *)args[3], (double *)args[4]); break;
    case 3: gelu_grad_f64(size, row, (const double *)args[3], (const double *)args[4], (double *)args[5]); break;
    case 4: sigmoid_grad_f64(size, row, (const double *)args[3], (const double *)args[4], (double *)args[5]); break;
    case 5: tanh_grad_f64(size, row, (const double *)args[3], (const double *)args[4], (double *)args[5]); break;
    case 6: sin_f64(size, row, (const double *)args[3], (double *)args[4]); break;
    case 7: cos_f64(size, row, (const double *)args[3], (double *)args[4]); break;
    case 8: exp_f64(size, row, (const double *)args[3], (double *)args[4]); break;
    case 9: log_f64(size, row, (const double *)args[3], (double *)args[4]); break;
    case 10: tanh_f64(size, row, (const double *)args[3], (double *)args[4]); break;
    case 11: softmax_f64(size, row, (const double *)args[3], (double *)args[4]); break;
    case 12: softmax_backprop_f64(size, row, (const double *)args[3], (const double *)args[4], (double *)args[5]); break;
    case 13: cross_entropy_f64(size, row, (const double *)args[3], (const double *)args[4], (double *)args[5]); break;
    case 14: cross_entropy_backprop_f64(size, row, (const double *)args[3], (const double *)args[4], (double *)args[5]); break;
    }
    return 0;
}
#endif
#undef tracer_run
#define LOOPS_KEY "298c8e13efaa909d"
