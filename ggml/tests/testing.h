// testing.h - a tiny test framework for the C unit tests (ggml/tests/test-*.c).
//
// Each test-*.c is one program: write `static void test_xxx(void) { ... }` functions, run them
// with T_RUN(test_xxx) from main, and end main with `return T_SUMMARY();`. Checks record the
// failure (file:line and message) and continue.

#ifndef GGML_TESTING_H
#define GGML_TESTING_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int t_checks_run;
static int t_checks_failed;
static int t_tests_run;
static int t_tests_failed;

#define T_CHECK_MSG(cond, ...) \
    do { \
        t_checks_run++; \
        if (!(cond)) { \
            t_checks_failed++; \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__); \
            fprintf(stderr, "\n"); \
        } \
    } while (0)

#define T_CHECK(cond) T_CHECK_MSG(cond, "%s", "")

// |a - b| <= tol * max(1, |b|)
#define T_NEAR(a, b, tol) \
    do { \
        double t_a_ = (double) (a), t_b_ = (double) (b); \
        double t_s_ = fabs(t_b_) > 1.0 ? fabs(t_b_) : 1.0; \
        T_CHECK_MSG(fabs(t_a_ - t_b_) <= (tol) * t_s_, "%s = %.9g, expected %s = %.9g (tol %g)", \
                    #a, t_a_, #b, t_b_, (double) (tol)); \
    } while (0)

#define T_RUN(fn) \
    do { \
        int t_before_ = t_checks_failed; \
        t_tests_run++; \
        fn(); \
        if (t_checks_failed != t_before_) { \
            t_tests_failed++; \
            fprintf(stderr, "FAIL %s\n", #fn); \
        } else { \
            printf("ok   %s\n", #fn); \
        } \
    } while (0)

// prints "<file>: N passed, M failed" and returns the exit status
#define T_SUMMARY() \
    (printf("%s: %d passed, %d failed\n", __FILE__, t_tests_run - t_tests_failed, t_tests_failed), \
     t_tests_failed == 0 ? 0 : 1)

#endif // GGML_TESTING_H
