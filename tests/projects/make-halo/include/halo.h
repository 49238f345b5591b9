#ifndef HALO_H
#define HALO_H

/* Rank 0 collects one value from each of ranks 1 and 2 (src/exchange.c). */
int halo_collect(int rank);

/* The sum of every rank's value, on every rank (src/checksum.c). */
int halo_checksum(int value);

#endif
