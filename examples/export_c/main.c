/* Calls the exported arm dynamics (arm.h) from C: no Python, no tracer runtime.
 * Built by arm.py: cc -std=c99 main.c -L. -larm -lm */
#include <stdio.h>
#include <stdlib.h>

#include "arm.h"

static void show(const char *name, const double *values, int count) {
    printf("%s:", name);
    for (int i = 0; i < count; i++) printf(" %.17g", values[i]);
    printf("\n");
}

int main(void) {
    double q[2] = {0.3, -0.4}, qd[2] = {0.0, 0.5};
    const double tau[2] = {1.0, 0.2};
    double qdd[2], d_q[4], d_qd[4], d_tau[4];
    void *work = malloc(arm_work_size()); /* one workspace, reused by every call */
    int code;
    if (work == NULL) return 1;
    code = arm(q, qd, tau, qdd, work);
    if (code == 0) code = arm_jacobian(q, qd, tau, d_q, d_qd, d_tau, work);
    if (code != 0) {
        fprintf(stderr, "arm: %s\n", arm_error_message(code));
        return 1;
    }
    show("qdd", qdd, 2);
    show("dqdd/dq", d_q, 4);
    show("dqdd/dtau", d_tau, 4);
    for (int step = 0; step < 1000; step++) { /* one second, semi-implicit Euler */
        if (arm(q, qd, tau, qdd, work) != 0) return 1;
        for (int i = 0; i < 2; i++) {
            qd[i] += 0.001 * qdd[i];
            q[i] += 0.001 * qd[i];
        }
    }
    show("q(1 s)", q, 2);
    free(work);
    return 0;
}
