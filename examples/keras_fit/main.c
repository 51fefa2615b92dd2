/* Classify points with the exported model, and say how each point's winning logit moves
 * with the point (its gradient, from the exported vjp): no Python needed.
 * Reads "N" then N lines of "x y" on stdin; prints, per point, the 3 logits, then the
 * gradient of the largest one with respect to (x, y). */
#include <stdio.h>
#include <stdlib.h>
#include "spirals.h"

int main(void) {
    long n;
    if (scanf("%ld", &n) != 1 || n < 1) return 2;
    float *points = malloc(sizeof(float) * 2 * n), *logits = malloc(sizeof(float) * 3 * n);
    float *seed = calloc(3 * n, sizeof(float)), *gradient = malloc(sizeof(float) * 2 * n);
    void *work = malloc(spirals_work_size(n));
    for (long i = 0; i < 2 * n; i++)
        if (scanf("%f", &points[i]) != 1) return 2;
    int code = spirals(points, n, logits, work);
    if (code) {
        fprintf(stderr, "%s\n", spirals_error_message(code));
        return 1;
    }
    for (long i = 0; i < n; i++) {  /* the vjp of the winning logit: a one-hot seed */
        int best = 0;
        for (int k = 1; k < 3; k++)
            if (logits[3 * i + k] > logits[3 * i + best]) best = k;
        seed[3 * i + best] = 1.0f;
    }
    code = spirals_vjp(points, seed, n, gradient, work);
    if (code) {
        fprintf(stderr, "%s\n", spirals_error_message(code));
        return 1;
    }
    for (long i = 0; i < n; i++)
        printf("%.9g %.9g %.9g %.9g %.9g\n", logits[3 * i], logits[3 * i + 1], logits[3 * i + 2],
               gradient[2 * i], gradient[2 * i + 1]);
    free(points); free(logits); free(seed); free(gradient); free(work);
    return 0;
}
