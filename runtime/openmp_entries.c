/* The OpenMP entry points of runtime/openmp_entries.h as one object file, built with the
 * extensions (setup.py) and linked into each compiled module (codegen/build.py), so that a
 * module's translation units need not compile them again each. */
#include "openmp_entries.h"
