/* Attention's geometry read from a node (see attention_common.h). */
#include "ops/attention/attention_common.h"

onyx_status ops_attention_dims(const graph_node *n, const type_info *q, const type_info *k,
                               const type_info *v, const type_info *past_k,
                               const type_info *past_v, geom_attention *out) {
    geom_att_shape s[5];
    geom_msg m;
    GEOM_TRY(m, geom_attention_onnx(ops_att_shape(q, &s[0]), ops_att_shape(k, &s[1]),
                                    ops_att_shape(v, &s[2]), ops_att_shape(past_k, &s[3]),
                                    ops_att_shape(past_v, &s[4]), attr_int(n, "q_num_heads", 0),
                                    attr_int(n, "kv_num_heads", 0), out, &m));
    return ONYX_OK;
}

onyx_status ops_attention_check_mask(const type_info *mask, const geom_attention *d) {
    geom_att_shape s;
    geom_msg m;
    GEOM_TRY(m, geom_attention_mask(ops_att_shape(mask, &s), d, &m));
    return ONYX_OK;
}
