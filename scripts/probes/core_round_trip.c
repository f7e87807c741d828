/* How far apart two cores are, as the host places them: the mean time for a
 * cache line to go from core A to core B and back (two threads pinned one per
 * core pass a counter through one atomic word). About 80-120 ns where the two
 * cores share a cache, several hundred where they do not. Used by
 * `scripts/bench --scaling`, whose threads-against-ranks ratio follows it.
 *
 *     core_round_trip [A B]   (cores 0 and 1 unless given)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TRIPS 200000L

static _Atomic long word __attribute__((aligned(64)));

static int pin(int core) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *answer(void *core) {
    if (pin(*(int *)core) != 0) {
        fprintf(stderr, "core_round_trip: cannot run on core %d\n", *(int *)core);
        exit(2);
    }
    for (long i = 0; i < TRIPS; i++) {
        while (atomic_load_explicit(&word, memory_order_acquire) != 2 * i + 1) {
        }
        atomic_store_explicit(&word, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int a = argc > 2 ? atoi(argv[1]) : 0, b = argc > 2 ? atoi(argv[2]) : 1;
    if (pin(a) != 0) {
        fprintf(stderr, "core_round_trip: cannot run on core %d\n", a);
        return 2;
    }
    pthread_t other;
    pthread_create(&other, NULL, answer, &b);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < TRIPS; i++) {
        atomic_store_explicit(&word, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&word, memory_order_acquire) != 2 * i + 2) {
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(other, NULL);
    double ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / TRIPS;
    printf("%.0f\n", ns);
    return 0;
}
