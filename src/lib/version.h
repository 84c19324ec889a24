/* version.h - the version of this stax: scripts/version.sh prints it
 * (the VERSION file, plus what git knows in a checkout) and the Makefile
 * compiles it into lib/version.c. stax --version prints it, and record
 * and import store it in the recording (META stax_version). */
#ifndef STAX_LIB_VERSION_H
#define STAX_LIB_VERSION_H

extern const char stax_version[];

#endif
