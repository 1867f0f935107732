# get_modelmeta(): what the exporter wrote into the ModelProto.
import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

graph = helper.make_graph([helper.make_node('Neg', ['x'], ['y'])], 'negate',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2])],
                          doc_string='the graph')
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)], producer_name='exporter',
                          producer_version='1.2', domain='ai.example', model_version=7,
                          doc_string='negates its input')
model.ir_version = 8
helper.set_model_props(model, {'author': 'onyx tests', 'license': 'MIT'})
sess = ort.InferenceSession(model.SerializeToString(), providers=['CPUExecutionProvider'])
meta = sess.get_modelmeta()
RESULT = {
    'producer_name': meta.producer_name, 'graph_name': meta.graph_name, 'domain': meta.domain,
    'description': meta.description, 'graph_description': meta.graph_description, 'version': meta.version,
    'custom_metadata_map': meta.custom_metadata_map,
    'y': sess.run(None, {'x': np.array([1, -2], np.float32)})[0],
}
