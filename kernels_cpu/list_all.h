/* Every CPU kernel family's list. */
#include "list_elementwise.h"
#include "list_reduce.h"
#include "list_math.h"
#include "list_shape.h"
#include "list_control.h"
