/* Every op family's list; each list file is `OP(Name)` lines, one per op file. */
#include "list_elementwise.h"
#include "list_reduce.h"
#include "list_math.h"
#include "list_shape.h"
#include "list_control.h"
