/* The names blocked_products_typed.h's includer and it defined for one type (blocked_solves_typed.h
   reads them too), undefined for the next. */
#undef V_TYPE
#undef V_MASK
#undef V_LANES
#undef V_ZERO
#undef V_SET1
#undef V_LOAD
#undef V_STORE
#undef V_MASK_LOAD
#undef V_MASK_STORE
#undef V_FMA
#undef V_ADD
#undef V_SUB
#undef V_DIV
#undef V_FNMADD
#undef V_INDEX
#undef V_INDICES
#undef V_GATHER
#undef BLOCK_ROWS
#undef BLOCK_VECTORS
#undef PASS_DEPTH
#undef FETCH_AHEAD
