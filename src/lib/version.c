/* version.c - see version.h. */
#include "lib/version.h"

/* The Makefile defines STAX_VERSION from scripts/version.sh; a build
 * without it (the fuzz targets) says so rather than guess. */
#ifndef STAX_VERSION
#define STAX_VERSION "unknown"
#endif

const char stax_version[] = STAX_VERSION;
