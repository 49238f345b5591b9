#ifndef RING_H
#define RING_H

/* Rank 0 hears from every other rank once, in arrival order; returns the
 * rank heard from first (ring.c). */
int ring_first_arrival(int rank, int size);

#endif
