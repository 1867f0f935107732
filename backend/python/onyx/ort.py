"""The onnxruntime-compatible API: code written for onnxruntime runs on onyx by changing the import
(`import onyx as onnxruntime`). InferenceSession, SessionOptions, RunOptions, OrtValue, IOBinding and
ModelMetadata map onto libonyx's session options, run options, profiling and metadata (include/onyx.h).

Providers: "CPUExecutionProvider" is onyx's CPU; "CUDAExecutionProvider" (options: device_id) is
onyx's CUDA device, with the CPU as fallback for what it lacks; when CUDA is not usable here the
session runs on the CPU with a warning, as onnxruntime does for a provider it does not have.
"OnyxTestExecutionProvider" is onyx's TEST device (host memory kept apart, for testing placement
and device-resident values without a GPU; device_type 'test').

Values in device memory: OrtValue.ortvalue_from_numpy(x, 'cuda'), IOBinding.bind_input with a
device pointer, bind_output(name, 'cuda'): inputs are read where they are and outputs stay on the
device between runs (OrtValue.data_ptr() is the device pointer, numpy() copies to the host).
A session may be run from many Python threads at once: ctypes releases the GIL during the run.
"""
import concurrent.futures
import copy
import ctypes
import datetime
import enum
import json
import os
import sys
import threading
import time
import warnings

import numpy as np

from . import _adapter, _lib, _model_wire
from ._lib import KIND_MAP, KIND_TENSOR, LogFn, Model, Rep, Value_p, Value_pp, lib
from ._values import (Arena, dtype_code, from_value, numpy_dtype, take_output, target_value, to_value,
                      values_array)
from ._call import NOT_HANDLED, CallPlan
from ._sparse import SparseTensor
from .session import NodeArg

CPU = 'CPUExecutionProvider'
CUDA = 'CUDAExecutionProvider'
TEST = 'OnyxTestExecutionProvider'   # accepted, not listed: onyx's TEST device
_ALL_PROVIDERS = [CUDA, CPU]


def _raise(cls, status, message):
    raise cls(-1, status, message)


def _check(code):
    if code != 0:
        raise _lib.error(code)


class GraphOptimizationLevel(enum.IntEnum):
    """As onnxruntime's: DISABLE_ALL is onyx's "none", BASIC its "basic" (constant folding),
    EXTENDED, LAYOUT and ALL its "all" (also fusion and opaque layouts)."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(enum.IntEnum):
    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


def _onyx_level(level):
    """onyx's optimization level for one of GraphOptimizationLevel's (an int of one too)."""
    try:
        level = GraphOptimizationLevel(level)
    except ValueError:
        _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT',
               f'SessionOptions.graph_optimization_level must be one of '
               f'{", ".join(f"{m.name} ({m.value})" for m in GraphOptimizationLevel)}, got {level!r}')
    return 0 if level == 0 else 1 if level == 1 else 2


def _log_level(name, level):
    """onyx's log level for onnxruntime's severity `level` (0 verbose .. 4 fatal; -1: the default
    logger's, as onnxruntime's SessionOptions start with)."""
    level = _lib.int_option(name, level, -1, 4)
    return _default_logger_severity if level < 0 else level


def get_all_providers():
    return list(_ALL_PROVIDERS)


def get_available_providers():
    """The CPU, and CUDA when a GPU and the CUDA plugin are usable here."""
    return ([CUDA] if lib.onyx_supports_device(b'CUDA') else []) + [CPU]


def get_device():
    return 'GPU' if lib.onyx_supports_device(b'CUDA') else 'CPU'


_default_logger_severity = 2


def set_default_logger_severity(level):
    global _default_logger_severity
    _default_logger_severity = _lib.int_option('default logger severity', level, 0, 4)


def set_seed(seed):  # noqa: ARG001 (onyx's random ops take their seeds from the model)
    pass


def get_version_string():
    """onyx's version (onnxruntime's gives its own)."""
    return lib.onyx_version().decode()


def get_build_info():
    return (f'onyx Build Info: version={get_version_string()}, library={_lib.library_path()}, '
            f'cuda={"yes" if lib.onyx_supports_device(b"CUDA") else "no"}')


def enable_telemetry_events():
    pass   # onyx sends no telemetry


def disable_telemetry_events():
    pass


# set_default_logger_callback: (severity, category, logid, code_location, message) for every log line
# of sessions created afterwards, instead of stderr; None restores stderr.
_default_logger_callback = None


def set_default_logger_callback(callback, severity=None):
    """As onnxruntime's: `callback` (a callable or None) receives (severity, category, logid,
    code_location, message) of each log line; `severity` (0 verbose .. 4 fatal) also becomes the
    default logger's severity. A callable that raises is ignored. RuntimeError for a non-callable or a
    severity out of range, as onnxruntime."""
    global _default_logger_callback, _default_logger_severity
    if callback is not None and not callable(callback):
        raise RuntimeError('set_default_logger_callback: callback must be a callable or None, '
                           f'got {type(callback).__name__}')
    if severity is not None:
        try:
            level = _lib.int_option('set_default_logger_callback severity', severity, 0, 4)
        except _lib.InvalidArgument as e:
            raise RuntimeError(str(e.message)) from None
        _default_logger_severity = level
    _default_logger_callback = callback


class OrtMemType(enum.IntEnum):
    CPU_INPUT = -2
    CPU_OUTPUT = -1
    CPU = -1
    DEFAULT = 0


class OrtAllocatorType(enum.IntEnum):
    INVALID = -1
    ORT_DEVICE_ALLOCATOR = 0
    ORT_ARENA_ALLOCATOR = 1


class OrtDeviceMemoryType(enum.IntEnum):
    DEFAULT = 0
    HOST_ACCESSIBLE = 5


class OrtMemoryInfoDeviceType(enum.IntEnum):
    CPU = 0
    GPU = 1
    NPU = 2
    FPGA = 3


class OrtDeviceVendorId(enum.IntEnum):
    NONE = 0
    AMD = 0x1002
    NVIDIA = 0x10DE
    ARM = 0x13B5
    MICROSOFT = 0x1414
    HUAWEI = 0x19E5
    QUALCOMM = 0x5143
    INTEL = 0x8086


class OrtSparseFormat(enum.IntEnum):
    ORT_SPARSE_UNDEFINED = 0
    ORT_SPARSE_COO = 1
    ORT_SPARSE_CSRC = 2
    ORT_SPARSE_BLOCK_SPARSE = 4


class OrtDevice:
    """Where a value lives, as onnxruntime's: device_type() 0 CPU, 1 GPU (onyx's CUDA)."""
    CPU, GPU, FPGA, NPU = 0, 1, 2, 3

    def __init__(self, device_type=0, mem_type=0, device_id=0, vendor_id=None):
        self._type, self._mem, self._id = int(device_type), int(mem_type), int(device_id)
        self._vendor = int(vendor_id if vendor_id is not None else
                           OrtDeviceVendorId.NVIDIA if self._type == 1 else OrtDeviceVendorId.NONE)

    @staticmethod
    def make(device_type, device_id):
        kind = str(device_type).lower()
        types = {'cpu': 0, 'cuda': 1, 'gpu': 1}
        if kind not in types:
            raise RuntimeError(f'Unsupported device type: {device_type} (onyx knows cpu, cuda)')
        return OrtDevice(types[kind], 0, int(device_id))

    @staticmethod
    def cpu():
        return 0

    @staticmethod
    def cuda():
        return 1

    @staticmethod
    def default_memory():
        return 0

    def device_id(self):
        return self._id

    def device_type(self):
        return self._type

    def device_vendor_id(self):
        return self._vendor

    def device_mem_type(self):
        return self._mem

    def __repr__(self):
        return f'OrtDevice(type={self._type}, id={self._id})'


class OrtMemoryInfo:
    """A memory description, as onnxruntime's (name, allocator_type, device_id, mem_type)."""

    def __init__(self, name, allocator_type, device_id, mem_type):
        self.name = str(name)
        self.allocator_type = OrtAllocatorType(allocator_type)
        self.device_id = int(device_id)
        self.mem_type = OrtMemType(mem_type)
        self.device_mem_type = OrtDeviceMemoryType.DEFAULT
        self.device_vendor_id = int(OrtDeviceVendorId.NVIDIA if self.name.lower().startswith('cuda')
                                    else OrtDeviceVendorId.NONE)

    @staticmethod
    def create_v2(name, device_type, vendor_id, device_id, device_mem_type, alignment, allocator_type):  # noqa: ARG004
        info = OrtMemoryInfo(name, allocator_type, device_id, OrtMemType.DEFAULT)
        info.device_mem_type = OrtDeviceMemoryType(device_mem_type)
        info.device_vendor_id = int(vendor_id)
        return info

    def __repr__(self):
        return f'OrtMemoryInfo(name={self.name!r}, device_id={self.device_id}, mem_type={self.mem_type.name})'


class OrtArenaCfg:
    """onnxruntime's arena settings: kept, without effect (onyx plans one arena per run context)."""
    _KEYS = ('max_mem', 'arena_extend_strategy', 'initial_chunk_size_bytes', 'max_dead_bytes_per_chunk',
             'initial_growth_chunk_size_bytes', 'max_power_of_two_extend_bytes')

    def __init__(self, *args):
        values = dict.fromkeys(self._KEYS, -1)
        if len(args) == 1 and isinstance(args[0], dict):
            for key, value in args[0].items():
                if key not in self._KEYS:
                    raise RuntimeError(f'Invalid OrtArenaCfg option: {key}')
                values[key] = int(value)
        elif len(args) == 4:
            values.update(zip(self._KEYS, (int(a) for a in args)))
        elif args:
            raise TypeError('OrtArenaCfg(max_mem, arena_extend_strategy, initial_chunk_size_bytes, '
                            'max_dead_bytes_per_chunk) or OrtArenaCfg({key: value})')
        self.__dict__.update(values)


def create_and_register_allocator(mem_info, arena_cfg):  # noqa: ARG001
    """Accepted without effect: onyx's memory is planned per session (one arena per run context)."""


def create_and_register_allocator_v2(provider_type, mem_info, provider_options, arena_cfg):  # noqa: ARG001
    """Accepted without effect, as create_and_register_allocator."""


def check_and_normalize_provider_args(providers, provider_options, available_provider_names):
    """onnxruntime's normalisation of (providers, provider_options): ([names], [{str: str}]). A provider
    given twice is kept once (the first), with a warning; ValueError for what is not of that form."""
    if providers is None:
        return [], []
    provider_name_to_options = {}

    def set_provider_options(name, options):
        if name not in available_provider_names:
            warnings.warn(f"Specified provider '{name}' is not in available provider names."
                          f"Available providers: '{', '.join(available_provider_names)}'", stacklevel=3)
        if name in provider_name_to_options:
            warnings.warn(f"Duplicate provider '{name}' encountered, ignoring.", stacklevel=3)
            return
        provider_name_to_options[name] = {str(k): str(v) for k, v in options.items()}

    if not isinstance(providers, (list, tuple)):
        raise ValueError("'providers' should be a sequence.")
    if provider_options is not None:
        if not isinstance(provider_options, (list, tuple)):
            raise ValueError("'provider_options' should be a sequence.")
        if len(providers) != len(provider_options):
            raise ValueError("'providers' and 'provider_options' should be the same length if both are given.")
        if not all(isinstance(p, str) for p in providers):
            raise ValueError("Only string values for 'providers' are supported if 'provider_options' is given.")
        if not all(isinstance(o, dict) for o in provider_options):
            raise ValueError("'provider_options' values must be dicts.")
        for name, options in zip(providers, provider_options):
            set_provider_options(name, options)
    else:
        for provider in providers:
            if isinstance(provider, str):
                set_provider_options(provider, {})
            elif (isinstance(provider, (list, tuple)) and len(provider) == 2 and isinstance(provider[0], str)
                  and isinstance(provider[1], dict)):
                set_provider_options(provider[0], provider[1])
            else:
                raise ValueError("'providers' values must be either strings or (string, dict) tuples.")
    return list(provider_name_to_options), list(provider_name_to_options.values())


# ---------------------------------------------------------------- options

# The session config entries onyx itself reads (backend/api_options.c); their meanings, values and
# defaults are documented in one place, include/onyx.h (onyx_session_options_set_config).
ONYX_SESSION_CONFIG = ('optimization.blocked_layouts', 'optimization.float16_as_float32',
                       'optimization.bfloat16', 'optimization.winograd', 'device.graphs', 'onyx.allow_newer_opsets',
                       'session.intra_op.allow_spinning', 'onyx.intra_op.spin_us',
                       'onyx.intra_op.doze_us')
# Key prefixes that are onyx's: a key there that onyx does not know is refused (a misspelt one
# would otherwise be dropped unseen), except onnxruntime's own keys in them (ORT_IGNORED_CONFIG).
ONYX_CONFIG_NAMESPACES = ('optimization.', 'device.', 'onyx.')
# onnxruntime's session config entries in onyx's namespaces (onnxruntime 1.30's
# onnxruntime_session_options_config_keys.h): accepted, without effect. Entries in onnxruntime's
# other namespaces (session.*, ep.*, mlas.*, ...) are accepted without effect too.
ORT_IGNORED_CONFIG = ('optimization.enable_gelu_approximation',
                      'optimization.minimal_build_optimizations',
                      'optimization.disable_specified_optimizers',
                      'optimization.enable_cast_chain_elimination',
                      'optimization.constant_folding_max_output_size_in_bytes')
# onnxruntime's config entries for SessionOptions.optimized_model_filepath, which the binding reads
# (onyx_session_options_set_optimized_model in include/onyx.h).
OPTIMIZED_EXTERNAL_FILE = 'session.optimized_model_external_initializers_file_name'
OPTIMIZED_EXTERNAL_MIN_SIZE = 'session.optimized_model_external_initializers_min_size_in_bytes'
# The run config entries onyx reads (RunOptions); the rest of the onyx.* namespace is refused,
# onnxruntime's own run entries are accepted without effect.
ONYX_RUN_CONFIG = ('onyx.timeout', 'onyx.max_iterations')


def _check_config_key(kind, key, known):
    if key.startswith(ONYX_CONFIG_NAMESPACES) and key not in known + ORT_IGNORED_CONFIG:
        _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT',
               f'unknown {kind} config key {key!r} (onyx knows: {", ".join(known)})')


class SessionOptions:
    """onnxruntime's SessionOptions. What onyx uses: intra_op_num_threads (0: all the CPUs this
    process may run on; more than those is clamped to them, with a warning in the log),
    graph_optimization_level, enable_profiling + profile_file_prefix, log_severity_level (lines at
    or above it go to stderr; -1: the default logger's), session config entries that onyx knows
    (ONYX_SESSION_CONFIG: a bad value for one of them is refused), free dimension overrides (bind
    symbolic dims at prepare) and, onyx's own, memory_limit (bytes of working memory per run; 0
    none). Config keys in onyx's namespaces (optimization.*, device.*, onyx.*) that onyx does not
    know are refused, except onnxruntime's own there (ORT_IGNORED_CONFIG), which are accepted
    without effect, as are onnxruntime's entries elsewhere (session.*, ep.*, ...). The rest
    (inter_op_num_threads, execution_mode, ...) is accepted and kept, without effect. Values out of
    range (a negative thread count or memory limit, an unknown optimization or log level) are
    refused with onyx.InvalidArgument naming the field when the session is created."""

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.execution_order = ExecutionOrder.DEFAULT
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.enable_profiling = False
        self.profile_file_prefix = 'onnxruntime_profile_'
        self.log_severity_level = -1   # the default logger's, as onnxruntime's
        self.log_verbosity_level = 0
        self.logid = ''
        self.optimized_model_filepath = ''
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.use_deterministic_compute = False
        self.memory_limit = 0
        self._config = {}
        self._free_dims = {}
        self._free_denotations = {}
        self._initializers = {}       # name -> numpy array replacing the model's initializer
        self._external_files = {}     # external data file name -> its bytes

    def add_session_config_entry(self, key, value):
        key = str(key)
        _check_config_key('session', key, ONYX_SESSION_CONFIG)
        self._config[key] = str(value)

    def get_session_config_entry(self, key):
        if key not in self._config:
            raise RuntimeError(f'SessionOptions does not have configuration with key: {key}')
        return self._config[key]

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        self._free_dims[str(dim_name)] = _lib.int_option(f'free dimension override {dim_name!r}',
                                                         dim_value, 0, _lib.INT64_MAX)

    def add_free_dimension_override_by_denotation(self, dim_denotation, dim_value):
        """Dims whose denotation (e.g. "DATA_BATCH") is `dim_denotation` take `dim_value` (reading
        denotations needs the onnx package)."""
        self._free_denotations[str(dim_denotation)] = _lib.int_option(
            f'free dimension override {dim_denotation!r}', dim_value, 0, _lib.INT64_MAX)

    def register_custom_ops_library(self, library_path):
        _raise(_lib.NotImplemented, 'ONYX_ERR_UNSUPPORTED',
               f'custom op libraries are not supported by onyx ({library_path})')

    def add_initializer(self, name, ortvalue):
        """The model's initializer `name` takes this value (a CPU OrtValue or array; rewriting the model
        needs the onnx package)."""
        self._initializers[str(name)] = _host_array(ortvalue, 'SessionOptions.add_initializer')

    def add_external_initializers(self, names, ortvalues):
        """Initializers whose data the model keeps outside it take these values instead."""
        if len(names) != len(ortvalues):
            raise ValueError('add_external_initializers: names and values differ in length')
        for name, value in zip(names, ortvalues):
            self._initializers[str(name)] = _host_array(value, 'SessionOptions.add_external_initializers')

    def add_external_initializers_from_files_in_memory(self, file_names, buffers, lengths):
        """External data files given as bytes: a tensor whose data is in file `file_names[i]` reads it
        from `buffers[i]` (of `lengths[i]` bytes) instead of the disk."""
        if not len(file_names) == len(buffers) == len(lengths):
            raise ValueError('add_external_initializers_from_files_in_memory: the three lists differ in length')
        for name, buf, n in zip(file_names, buffers, lengths):
            data = bytes(memoryview(buf).cast('B')[:int(n)])
            if len(data) != int(n):
                raise ValueError(f'add_external_initializers_from_files_in_memory: {name!r} has '
                                 f'{len(data)} bytes, {n} given')
            self._external_files[os.path.normpath(str(name))] = data

    def disable_profiling(self):
        self.enable_profiling = False


class RunOptions:
    """onnxruntime's RunOptions: `terminate` (set from any thread: runs using these options stop with
    onyx.Fail; set it back to False to run again), `logid` (onyx's run tag, in profile events and
    log lines), log levels (accepted). onyx's own: `timeout` (seconds per run, 0 none: past it the
    run raises onyx.Fail, status ONYX_ERR_TIMEOUT) and `max_iterations` (cap on Loop/Scan
    iterations and sequence lengths); also as run config entries "onyx.timeout" and
    "onyx.max_iterations". Other onyx.* run config keys are refused; onnxruntime's run config
    entries are accepted without effect. A negative, NaN or non-numeric timeout, a negative or
    non-integer max_iterations, and a logid over 256 bytes are refused (onyx.InvalidArgument).
    add_active_adapter(adapter): the LoraAdapter's parameters feed runs using these options (see
    InferenceSession.run)."""

    def __init__(self):
        self._adapters = []
        handle = ctypes.c_void_p()
        _check(lib.onyx_run_options_create(ctypes.byref(handle)))
        self._handle = handle
        self._terminate = False
        self._timeout = 0.0
        self._max_iterations = 0
        self._logid = ''
        self._config = {}
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.only_execute_path_to_fetches = False
        self.training_mode = False

    @property
    def terminate(self):
        return self._terminate

    @terminate.setter
    def terminate(self, value):
        self._terminate = bool(value)
        _check(lib.onyx_run_options_set_terminate(self._handle, self._terminate))

    @property
    def timeout(self):
        return self._timeout

    @timeout.setter
    def timeout(self, seconds):
        try:
            seconds = float(seconds or 0)
        except (TypeError, ValueError):
            _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT',
                   f'RunOptions.timeout must be a number of seconds, got {seconds!r}')
        _check(lib.onyx_run_options_set_timeout(self._handle, seconds))
        self._timeout = seconds

    @property
    def max_iterations(self):
        return self._max_iterations

    @max_iterations.setter
    def max_iterations(self, n):
        n = _lib.int_option('RunOptions.max_iterations', 0 if n is None else n, 0, _lib.INT64_MAX)
        _check(lib.onyx_run_options_set_max_iterations(self._handle, n))
        self._max_iterations = n

    @property
    def logid(self):
        return self._logid

    @logid.setter
    def logid(self, tag):
        self._logid = str(tag or '')
        _check(lib.onyx_run_options_set_tag(self._handle, self._logid.encode() if self._logid else None))

    log_tag = logid

    def add_run_config_entry(self, key, value):
        key, value = str(key), str(value)
        _check_config_key('run', key, ONYX_RUN_CONFIG)
        if key == 'onyx.timeout':
            self.timeout = value
        elif key == 'onyx.max_iterations':
            try:
                n = int(value)
            except ValueError:
                _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT',
                       f"run config 'onyx.max_iterations' must be an integer, got {value!r}")
            self.max_iterations = n
        self._config[key] = value

    def add_active_adapter(self, adapter):
        if not isinstance(adapter, LoraAdapter):   # onnxruntime takes None too, then crashes
            raise TypeError(f'add_active_adapter takes a LoraAdapter, not {type(adapter).__name__}')
        self._adapters.append(adapter)

    def get_run_config_entry(self, key):
        if key not in self._config:
            _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT', f'RunOptions has no config entry {key!r}')
        return self._config[key]

    def __del__(self):
        handle = getattr(self, '_handle', None)
        if handle is not None and handle.value:
            self._handle = None
            lib.onyx_run_options_free(handle)


# ---------------------------------------------------------------- metadata

class ModelMetadata:
    """onnxruntime's ModelMetadata (producer_name, graph_name, domain, description, graph_description,
    version, custom_metadata_map), with onyx's extras: producer_version, ir_version, opsets
    ({domain: version}, the default domain as "ai.onnx"), node_count, op_counts ({op: count})."""

    def __init__(self, handle):
        def s(fn):
            return fn(handle).decode('utf-8', 'replace')
        self.producer_name = s(lib.onyx_model_metadata_producer_name)
        self.producer_version = s(lib.onyx_model_metadata_producer_version)
        self.domain = s(lib.onyx_model_metadata_domain)
        self.description = s(lib.onyx_model_metadata_doc_string)
        self.graph_name = s(lib.onyx_model_metadata_graph_name)
        self.graph_description = s(lib.onyx_model_metadata_graph_doc_string)
        self.version = int(lib.onyx_model_metadata_model_version(handle))
        self.ir_version = int(lib.onyx_model_metadata_ir_version(handle))
        key, value = ctypes.c_char_p(), ctypes.c_char_p()
        self.custom_metadata_map = {}
        for i in range(lib.onyx_model_metadata_prop_count(handle)):
            _check(lib.onyx_model_metadata_prop(handle, i, ctypes.byref(key), ctypes.byref(value)))
            self.custom_metadata_map[key.value.decode('utf-8', 'replace')] = value.value.decode('utf-8', 'replace')
        version = ctypes.c_int64()
        self.opsets = {}
        for i in range(lib.onyx_model_metadata_opset_count(handle)):
            _check(lib.onyx_model_metadata_opset(handle, i, ctypes.byref(key), ctypes.byref(version)))
            self.opsets[key.value.decode() or 'ai.onnx'] = int(version.value)
        self.node_count = int(lib.onyx_model_metadata_node_count(handle))
        count = ctypes.c_size_t()
        self.op_counts = {}
        for i in range(lib.onyx_model_metadata_op_count(handle)):
            _check(lib.onyx_model_metadata_op(handle, i, ctypes.byref(key), ctypes.byref(value), ctypes.byref(count)))
            domain = key.value.decode()
            self.op_counts[(domain + '.' if domain else '') + value.value.decode()] = int(count.value)

    def __repr__(self):
        return (f'ModelMetadata(producer_name={self.producer_name!r}, graph_name={self.graph_name!r}, '
                f'domain={self.domain!r}, version={self.version}, '
                f'custom_metadata_map={self.custom_metadata_map!r})')


def model_metadata(model):
    """The ModelMetadata of a model file, its bytes, or an onnx.ModelProto, read without loading the
    graph or its weights."""
    handle = ctypes.c_void_p()
    if isinstance(model, (str, os.PathLike)):
        _check(lib.onyx_model_metadata_read_file(os.fsencode(model), ctypes.byref(handle)))
    else:
        data = model.SerializeToString() if hasattr(model, 'SerializeToString') else bytes(model)
        _check(lib.onyx_model_metadata_read_buffer(data, len(data), ctypes.byref(handle)))
    try:
        return ModelMetadata(handle)
    finally:
        lib.onyx_model_metadata_free(handle)


# ---------------------------------------------------------------- values

def _device(device_type, device_id=0):
    """libonyx's name of an onnxruntime device ('cpu', 'cuda', 'gpu'; 'test' for onyx's TEST
    device), checked usable here."""
    device = str(device_type).lower()
    if device == 'cpu':
        return b'CPU'
    name = {'cuda': f'CUDA:{int(device_id)}', 'gpu': f'CUDA:{int(device_id)}', 'test': 'TEST'}.get(device)
    if name is None or not lib.onyx_supports_device(name.encode()):
        _raise(_lib.EPFail, 'ONYX_ERR_DEVICE', f"device '{device_type}:{device_id}' is not available "
               f'(available providers: {get_available_providers()})')
    return name.encode()


class _DeviceTensor:
    """A tensor in device memory held through a libonyx value: owned (freed with this object) or
    borrowing the caller's memory."""

    def __init__(self, handle, device_type):
        self.handle = handle
        self.device_type = device_type

    @staticmethod
    def from_numpy(arr, device):
        arr = np.ascontiguousarray(arr)
        host, out = Value_p(), Value_p()
        dims = (ctypes.c_int64 * max(arr.ndim, 1))(*arr.shape)
        _check(lib.onyx_value_new_tensor(dtype_code(arr.dtype), arr.ndim, dims,
                                         arr.ctypes.data if arr.nbytes else None, arr.nbytes,
                                         ctypes.byref(host)))
        try:
            _check(lib.onyx_value_copy_to_device(host, device, ctypes.byref(out)))
        finally:
            lib.onyx_value_free(host)
        return out

    @property
    def shape(self):
        dims = lib.onyx_tensor_dims(self.handle)
        return tuple(dims[i] for i in range(lib.onyx_tensor_rank(self.handle)))

    @property
    def dtype(self):
        return numpy_dtype(lib.onyx_tensor_dtype(self.handle))

    def numpy(self):
        return from_value(self.handle)   # copied to the host

    def data_ptr(self):
        return lib.onyx_tensor_data(self.handle) or 0

    def __del__(self):
        if getattr(self, 'handle', None):
            lib.onyx_value_free(self.handle)
            self.handle = None


def _check_device(device_type, device_id=0):
    _device(device_type, device_id)


def _type_string(value):
    if isinstance(value, np.ndarray):
        code = dtype_code(value.dtype)
        return f'tensor({lib.onyx_dtype_name(code).decode()})'
    if isinstance(value, list):
        return f'seq({_type_string(value[0])})' if value else 'seq(tensor(undefined))'
    if isinstance(value, dict):
        return 'map'
    return 'optional'


def _host_array(value, where):
    """The numpy array of a CPU OrtValue or array-like (for values an option keeps)."""
    if isinstance(value, OrtValue):
        value = value._value
    if isinstance(value, _DeviceTensor):
        _raise(_lib.NotImplemented, 'ONYX_ERR_UNSUPPORTED', f'{where}: the value must be in CPU memory')
    return np.asarray(value)


# DLPack (https://dmlc.github.io/dlpack/): the capsule's DLManagedTensor, read to answer
# is_dlpack_uint8_tensor; numpy does the producing and consuming.
class _DLDataType(ctypes.Structure):
    _fields_ = [('code', ctypes.c_uint8), ('bits', ctypes.c_uint8), ('lanes', ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [('data', ctypes.c_void_p), ('device_type', ctypes.c_int32), ('device_id', ctypes.c_int32),
                ('ndim', ctypes.c_int32), ('dtype', _DLDataType), ('shape', ctypes.POINTER(ctypes.c_int64)),
                ('strides', ctypes.POINTER(ctypes.c_int64)), ('byte_offset', ctypes.c_uint64)]


def _dlpack_tensor(capsule):
    """The DLTensor in an unconsumed "dltensor" capsule."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    valid = ctypes.pythonapi.PyCapsule_IsValid
    valid.restype, valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    if not valid(capsule, b'dltensor'):
        raise RuntimeError('not an unconsumed DLPack capsule ("dltensor")')
    return _DLTensor.from_address(get(capsule, b'dltensor'))


def is_dlpack_uint8_tensor(capsule):
    """Whether a DLPack capsule holds uint8 (onnxruntime's helper: DLPack's bool is often uint8)."""
    t = _dlpack_tensor(capsule)
    return t.dtype.code == 1 and t.dtype.bits == 8


class _Capsule:
    """A bare DLPack capsule as an object numpy's from_dlpack takes (CPU memory)."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):  # noqa: ARG002
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


class OrtValue:
    """A value in CPU memory, as onnxruntime's OrtValue: a tensor (a numpy array, shared and not
    copied when it is C-contiguous), a sequence (a list) or an empty optional (None). Also
    onnxruntime's C-level OrtValue (onnxruntime.capi._pybind_state.OrtValue, `_ortvalue`): the
    same object. np.asarray(v) is the array (no copy); DLPack both ways (__dlpack__ / from_dlpack,
    shared memory) for CPU tensors."""

    def __init__(self, value, device_type='cpu', device_id=0):
        self._value = value
        self._device = (str(device_type).lower(), int(device_id))

    @property
    def _ortvalue(self):
        return self

    def _get_c_value(self):
        return self

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            if copy is False:
                raise ValueError(f'OrtValue of {arr.dtype} cannot become {np.dtype(dtype)} without a copy')
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def tensor_size_in_bytes(self):
        if not self.is_tensor():
            _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT', 'tensor_size_in_bytes() is for tensors')
        if isinstance(self._value, _DeviceTensor):
            return int(lib.onyx_tensor_nbytes(self._value.handle))
        return int(self._value.nbytes)

    def _host_tensor(self, what):
        if isinstance(self._value, _DeviceTensor) or not isinstance(self._value, np.ndarray):
            _raise(_lib.NotImplemented, 'ONYX_ERR_UNSUPPORTED', f'{what}: onyx shares CPU tensors only')
        return self._value

    def __dlpack__(self, stream=None, **kwargs):  # noqa: ARG002
        return self._host_tensor('__dlpack__').__dlpack__(**kwargs)

    def __dlpack_device__(self):
        self._host_tensor('__dlpack_device__')
        return (1, 0)   # kDLCPU, device 0

    def to_dlpack(self):
        return self.__dlpack__()

    @staticmethod
    def from_dlpack(data, is_bool_tensor=False):
        """An OrtValue sharing the memory of a DLPack capsule or of an object with __dlpack__ (a numpy
        array, a torch CPU tensor, an OrtValue). is_bool_tensor: read uint8 data as bool."""
        source = _Capsule(data) if type(data).__name__ == 'PyCapsule' else data
        arr = np.from_dlpack(source)
        if is_bool_tensor and arr.dtype == np.uint8:
            arr = arr.view(np.bool_)
        return OrtValue(arr)

    @staticmethod
    def ortvalue_from_numpy(numpy_obj, device_type='cpu', device_id=0, vendor_id=-1):  # noqa: ARG004
        device = _device(device_type, device_id)
        arr = numpy_obj if isinstance(numpy_obj, np.ndarray) else np.asarray(numpy_obj)
        if device != b'CPU':
            return OrtValue(_DeviceTensor(_DeviceTensor.from_numpy(arr, device), str(device_type).lower()),
                            device_type, device_id)
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        return OrtValue(arr, device_type, device_id)

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type, device_type='cpu', device_id=0, vendor_id=-1):  # noqa: ARG004
        dtype = numpy_dtype(element_type) if isinstance(element_type, int) else np.dtype(element_type)
        return OrtValue.ortvalue_from_numpy(np.zeros(tuple(shape), dtype), device_type, device_id)

    @staticmethod
    def ortvalue_from_numpy_with_onnx_type(data, onnx_element_type):
        """The array's memory read as the ONNX element type (its bits, not its values, as
        onnxruntime's: for types numpy lacks, e.g. bfloat16 from uint16); the sizes must agree."""
        arr = np.ascontiguousarray(data)
        dtype = numpy_dtype(int(onnx_element_type))
        if arr.dtype.itemsize != dtype.itemsize:   # onnxruntime's words
            _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT',
                   f'Items size in the incoming array: {arr.dtype.itemsize} '
                   f'specified by onnxtype: {dtype.itemsize}')
        return OrtValue(arr.view(dtype))

    @staticmethod
    def ort_value_from_sparse_tensor(sparse_tensor):
        if not isinstance(sparse_tensor, SparseTensor):
            raise TypeError(f'ort_value_from_sparse_tensor takes a SparseTensor, not {type(sparse_tensor).__name__}')
        return OrtValue(sparse_tensor)

    def numpy(self):
        if not self.is_tensor():
            _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT', 'numpy() is for tensors')
        return self._value.numpy() if isinstance(self._value, _DeviceTensor) else self._value

    def data_ptr(self):
        if isinstance(self._value, _DeviceTensor):
            return self._value.data_ptr()
        return self._value.ctypes.data if self.is_tensor() else 0

    def device_name(self):
        return self._device[0]

    def shape(self):
        return list(self._value.shape) if self.is_tensor() else []

    def data_type(self):
        if self.is_sparse_tensor():
            return self._value.data_type()
        if isinstance(self._value, _DeviceTensor):
            return f'tensor({lib.onyx_dtype_name(lib.onyx_tensor_dtype(self._value.handle)).decode()})'
        return _type_string(self._value)

    def element_type(self):
        """The ONNX element type number (onnx.TensorProto.FLOAT is 1), as onnxruntime's."""
        if not self.is_tensor():
            _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT', 'element_type() is for tensors')
        if isinstance(self._value, _DeviceTensor):
            return int(lib.onyx_tensor_dtype(self._value.handle))
        return dtype_code(self._value.dtype)

    def is_tensor(self):
        return isinstance(self._value, (np.ndarray, _DeviceTensor))

    def is_tensor_sequence(self):
        return isinstance(self._value, list)

    def is_sparse_tensor(self):
        return isinstance(self._value, SparseTensor)

    def has_value(self):
        return self._value is not None

    def update_inplace(self, np_arr):
        if isinstance(self._value, _DeviceTensor):
            _raise(_lib.NotImplemented, 'ONYX_ERR_UNSUPPORTED',
                   'update_inplace of a device value: make a new one with ortvalue_from_numpy')
        np.copyto(self._value, np.asarray(np_arr).reshape(self._value.shape), casting='no')

    def as_sparse_tensor(self):
        if not self.is_sparse_tensor():
            _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT', 'as_sparse_tensor() of a value that is no sparse tensor')
        return self._value

    def __repr__(self):
        return f'OrtValue({self.data_type()}, shape={self.shape()}, device={self._device[0]!r})'


def _pointer_array(device_type, device_id, element_type, shape, buffer_ptr):
    """Memory the caller owns, bound by pointer: a numpy array over it on the CPU, a borrowing
    _DeviceTensor on a device."""
    device = _device(device_type, device_id)
    dtype = numpy_dtype(element_type) if isinstance(element_type, int) else np.dtype(element_type)
    shape = tuple(int(d) for d in shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if not buffer_ptr:
        _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT', 'buffer_ptr is NULL')
    if device != b'CPU':
        out = Value_p()
        dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        _check(lib.onyx_value_wrap_device_tensor(device, dtype_code(dtype), len(shape), dims,
                                                 ctypes.c_void_p(int(buffer_ptr)), nbytes,
                                                 ctypes.byref(out)))
        return _DeviceTensor(out, str(device_type).lower())
    buf = (ctypes.c_char * max(nbytes, 1)).from_address(int(buffer_ptr))
    return np.frombuffer(buf, dtype=dtype, count=int(np.prod(shape, dtype=np.int64))).reshape(shape)


class IOBinding:
    """onnxruntime's IOBinding: inputs bound to numpy arrays, OrtValues or buffers by pointer, on
    the CPU or in device memory (lent to the run without a copy); outputs by name, allocated by onyx
    on the CPU or the bound device (kept there: get_outputs() gives device OrtValues), or written
    into a bound OrtValue or buffer, on the CPU or a device."""

    def __init__(self, session):
        self._session = session
        self._inputs = {}
        self._outputs = []   # [(name, target array or _DeviceTensor, or None)]
        self._on_host = set()   # names bound to onyx's memory on the CPU
        self._results = []
        self._output_device = (b'CPU', 'cpu')

    def bind_cpu_input(self, name, arr_on_cpu):
        self._inputs[name] = arr_on_cpu

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        self._inputs[name] = _pointer_array(device_type, device_id, element_type, shape, buffer_ptr)

    def bind_ortvalue_input(self, name, ortvalue):
        self._inputs[name] = ortvalue._value

    def _bind_out(self, name, target):
        """A name bound again keeps its place (get_outputs' order), as onnxruntime's."""
        self._on_host.discard(name)
        for i, (n, _) in enumerate(self._outputs):
            if n == name:
                self._outputs[i] = (name, target)
                return
        self._outputs.append((name, target))

    def bind_output(self, name, device_type='cpu', device_id=0, element_type=None, shape=None,
                    buffer_ptr=None):
        if buffer_ptr is not None:
            if element_type is None or shape is None:
                _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT',
                       'bind_output with buffer_ptr needs element_type and shape')
            self._bind_out(name, _pointer_array(device_type, device_id, element_type, shape,
                                                buffer_ptr))
        else:
            device = _device(device_type, device_id)
            if device != b'CPU':
                self._output_device = (device, str(device_type).lower())
            self._bind_out(name, None)
            if device == b'CPU':
                self._on_host.add(name)

    def bind_ortvalue_output(self, name, ortvalue):
        self._bind_out(name, ortvalue._value)

    def _run_device(self):
        """The output device of the run: the one bound by name, else that of a device target,
        so that the outputs aimed at device memory are made there (in place where they may be)."""
        if self._output_device[0] != b'CPU':
            return self._output_device[0]
        for _, target in self._outputs:
            if isinstance(target, _DeviceTensor):
                return _device(target.device_type)
        return b'CPU'

    def synchronize_inputs(self):
        pass

    def synchronize_outputs(self):
        pass

    def clear_binding_inputs(self):
        self._inputs = {}

    def clear_binding_outputs(self):
        self._outputs = []
        self._on_host = set()
        self._results = []

    def get_outputs(self):
        return [OrtValue(v, v.device_type if isinstance(v, _DeviceTensor) else 'cpu')
                for v in self._results]

    def copy_outputs_to_cpu(self):
        return [v.numpy() if isinstance(v, _DeviceTensor) else
                np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in self._results]

    def _run(self, run_options):
        names = [n for n, _ in self._outputs]
        if not names:
            names = [o.name for o in self._session._outputs]
            self._outputs = [(n, None) for n in names]
        if run_options is not None and run_options._adapters:   # onnxruntime's words and behaviour
            warnings.warn("run_with_iobinding has active adapters specified, but won't have an "
                          'effect', RuntimeWarning, stacklevel=3)
        # bound buffers are written by the run where they are (a cache bound as both past and
        # present is appended in place: onyx_rep_run_into), or filled from its result here
        targets = {n: t for n, t in self._outputs if t is not None}
        results = self._session._run(names, self._inputs, run_options, self._run_device(),
                                     adapters=False, targets=targets)
        out = []
        for (name, target), value in zip(self._outputs, results):
            if name in self._on_host and isinstance(value, _DeviceTensor):
                value = value.numpy()   # bound to the CPU in a run whose outputs stay on a device
            if target is not None and value is not target:
                if not isinstance(value, np.ndarray) or target.shape != value.shape or target.dtype != value.dtype:
                    _raise(_lib.InvalidArgument, 'ONYX_ERR_SHAPE',
                           f"output '{name}' is {_type_string(value)} of shape {getattr(value, 'shape', None)}; "
                           f'the bound buffer is {target.dtype} of shape {target.shape}')
                np.copyto(target, value)
                value = target
            out.append(value)
        self._results = out


# ---------------------------------------------------------------- LoRA adapters

def _adapter_path(what, path):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f'{what} takes a file path, not {type(path).__name__}')
    return os.fspath(path)


class LoraAdapter:
    """onnxruntime's LoraAdapter: the parameters of an adapter file (.onnx_adapter, onnxruntime's
    format), read by Load(path). A run whose RunOptions name it (add_active_adapter) feeds each
    parameter as the model input of that name. A file that is not a valid adapter, or holds a type
    onnxruntime's reader refuses, raises RuntimeError naming what is wrong, as onnxruntime's."""

    def __init__(self):
        self._params = {}   # name -> numpy array

    def Load(self, adapter_file_path):  # noqa: N802 (onnxruntime's name)
        _, _, _, self._params = _adapter.read_adapter_file(_adapter_path('LoraAdapter.Load',
                                                                         adapter_file_path))


class AdapterFormat:
    """onnxruntime's AdapterFormat: writes (export_adapter) and reads (read_adapter) adapter files
    in onnxruntime's format, compatible both ways. Parameters are OrtValues of numeric tensors of
    rank 1 and more (what onnxruntime's reader takes); versions are 32-bit integers. Also the
    C-level class's properties (format_version, adapter_version, model_version, parameters)."""

    def __init__(self, adapter=None):
        self._format_version = _adapter.FORMAT_VERSION
        self._adapter_version = 0
        self._model_version = 0
        self._params = {}   # name -> OrtValue
        if adapter is not None:   # onnxruntime's wrapper over its C-level object, here the same
            if not isinstance(adapter, AdapterFormat):
                raise TypeError('AdapterFormat(adapter) takes an AdapterFormat, '
                                f'not {type(adapter).__name__}')
            self.__dict__.update(adapter.__dict__)
            self._params = dict(adapter._params)

    @staticmethod
    def read_adapter(file_path):
        fmt, adapter_version, model_version, params = _adapter.read_adapter_file(
            _adapter_path('AdapterFormat.read_adapter', file_path))
        out = AdapterFormat()
        out._format_version = fmt
        out._adapter_version, out._model_version = adapter_version, model_version
        out._params = {name: OrtValue(arr) for name, arr in params.items()}
        return out

    def export_adapter(self, file_path):
        path = _adapter_path('AdapterFormat.export_adapter', file_path)
        params = {}
        for name, value in self._params.items():
            where = f"adapter parameter '{name}'"
            if not value.is_tensor():
                raise TypeError(f'{where} is {value.data_type()}: adapters hold tensors')
            code = value.element_type()
            if code not in _adapter.PARAMETER_TYPES:
                raise TypeError(f'{where} is {value.data_type()}: adapter files hold numeric '
                                'tensors (onnxruntime reads no strings, bools or complex numbers '
                                'from them)')
            arr = value.numpy()
            if arr.ndim == 0:
                raise ValueError(f'{where} is a scalar: adapter files hold tensors of rank 1 and '
                                 'more (onnxruntime reads no scalars from them)')
            params[name] = (code, arr)
        data = _adapter.adapter_bytes(self._adapter_version, self._model_version, params)
        try:
            with open(path, 'wb') as f:
                f.write(data)
        except OSError as e:
            raise _adapter.AdapterError(
                f'cannot write adapter file {path!r}: {e.strerror or e}') from None

    def get_format_version(self):
        return self._format_version

    def set_adapter_version(self, adapter_version):
        self._adapter_version = _adapter.check_version('adapter_version', adapter_version)

    def get_adapter_version(self):
        return self._adapter_version

    def set_model_version(self, model_version):
        self._model_version = _adapter.check_version('model_version', model_version)

    def get_model_version(self):
        return self._model_version

    def set_parameters(self, params):
        if not isinstance(params, dict):
            raise TypeError('set_parameters takes a dict of name -> OrtValue, '
                            f'not {type(params).__name__}')
        for name, value in params.items():
            if not isinstance(name, str) or not isinstance(value, OrtValue):
                raise TypeError(f'set_parameters takes a dict of str -> OrtValue; {name!r} maps to '
                                f'{type(value).__name__}')
        self._params = dict(params)

    def get_parameters(self):
        return dict(self._params)

    format_version = property(get_format_version)
    adapter_version = property(get_adapter_version, set_adapter_version)
    model_version = property(get_model_version, set_model_version)
    parameters = property(get_parameters, set_parameters)


# ---------------------------------------------------------------- the session

def _provider_list(providers, provider_options):
    """[(name, {options})] from onnxruntime's forms: names, (name, options) tuples, and a parallel
    provider_options list."""
    if providers is None:
        return [(CPU, {})]
    if isinstance(providers, str):
        providers = [providers]
    out = []
    for i, p in enumerate(providers):
        if isinstance(p, (tuple, list)):
            name, opts = p[0], dict(p[1] or {})
        else:
            name = p
            opts = dict(provider_options[i]) if provider_options and i < len(provider_options) else {}
        out.append((str(name), {str(k): v for k, v in opts.items()}))
    return out


class InferenceSession:
    """onnxruntime's InferenceSession over libonyx.

    InferenceSession(path_or_bytes, sess_options=None, providers=None, provider_options=None)
      path_or_bytes: a file path, the model's bytes (or an onnx.ModelProto).
      providers: names or (name, options) tuples, in priority order; default the CPU.

    Initializers that are also graph inputs (get_overridable_initializers) may be fed, as in
    onnxruntime, directly or by a LoRA adapter: onyx keeps them as constants in the session it
    prepares, so a run feeding some of them runs a second session of the model in which those are
    inputs, prepared on first use and kept (a few sets of names; each holds its own copy of the
    weights).
    """

    _model_dir = None       # external data folder of a model given as bytes made here
    _overridable_names = None
    _variants = None        # frozenset of initializer names -> the session where they are inputs
    _VARIANTS_KEPT = 4
    _variants_lock = threading.Lock()

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        self._rep = None
        self._log_fn = None
        if hasattr(path_or_bytes, 'SerializeToString'):
            path_or_bytes = path_or_bytes.SerializeToString()
        if not isinstance(path_or_bytes, (str, bytes, bytearray, memoryview, os.PathLike)):
            raise TypeError(f'Unable to load from type {type(path_or_bytes)!r}')
        self._model_path = os.fspath(path_or_bytes) if isinstance(path_or_bytes, (str, os.PathLike)) else None
        self._model_bytes = None if self._model_path is not None else bytes(path_or_bytes)
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        self._meta = model_metadata(self._model_path if self._model_path is not None else self._model_bytes)
        if kwargs.get('read_config_from_model', os.environ.get('ORT_LOAD_CONFIG_FROM_MODEL') == '1'):
            self._sess_options = _options_from_model(self._sess_options, self._meta)
        self._create(providers, provider_options)

    @property
    def _sess(self):
        """onnxruntime's C-level session (onnxruntime.capi._pybind_state.InferenceSession)."""
        return _CSession(self)

    # -- creation

    @staticmethod
    def _set_optimized_model(handle, so):
        """optimized_model_filepath: the model as onyx runs it is written at prepare, its
        initializers of min_size bytes and more (onnxruntime's default 1024) to the external file
        when the config names one, as onnxruntime's keys say."""
        path = so.optimized_model_filepath
        if not path:
            return
        external = so._config.get(OPTIMIZED_EXTERNAL_FILE, '')
        text = so._config.get(OPTIMIZED_EXTERNAL_MIN_SIZE, '1024')
        try:
            min_size = int(text, 10)
        except ValueError:
            min_size = -1
        if min_size < 0 or min_size > _lib.SIZE_MAX:
            _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT',
                   f'session config {OPTIMIZED_EXTERNAL_MIN_SIZE!r} must be a byte count, got {text!r}')
        _check(lib.onyx_session_options_set_optimized_model(
            handle, os.fsencode(path), os.fsencode(external) if external else None, min_size))

    def _create(self, providers, provider_options):
        requested = _provider_list(providers, provider_options)
        # asking about CUDA loads the CUDA plugin (and its libraries): only when it was asked for
        cpu_only = all(name in (CPU, TEST) for name, _ in requested)
        available = [CPU] if cpu_only else get_available_providers()
        devices, used, options = [], [], {}
        for name, opts in requested:
            if name == TEST:
                devices.append('TEST')
                used.append(name)
                options[name] = {}
                continue
            if name not in _ALL_PROVIDERS:
                warnings.warn(f"Specified provider '{name}' is not in available provider names."
                              f"Available providers: '{', '.join(available)}'", stacklevel=4)
                continue
            if name not in available:
                warnings.warn(f"Specified provider '{name}' is not in available provider names."
                              f"Available providers: '{', '.join(available)}'", stacklevel=4)
                continue
            if name == CUDA:
                devices.append(f'CUDA:{int(opts.get("device_id", 0))}')
            elif name == CPU:
                devices.append('CPU')   # in its place: providers are a priority order
            used.append(name)
            options[name] = {k: str(v) for k, v in opts.items()}
        if CPU not in used:
            used.append(CPU)   # the CPU is always the fallback
            options.setdefault(CPU, {})
            devices.append('CPU')
        self._providers = used
        self._provider_options = options
        self._close()
        so = self._sess_options
        handle = ctypes.c_void_p()
        _check(lib.onyx_session_options_create(ctypes.byref(handle)))
        model = ctypes.POINTER(Model)()
        arena = Arena()
        try:
            data, base = _rewritten_model(self._model_path, self._model_bytes, so)
            base = base or self._model_dir
            if data is None:
                _check(lib.onyx_model_load_file(os.fsencode(self._model_path), ctypes.byref(model)))
            else:
                _check(lib.onyx_model_load_buffer(data, len(data), base, ctypes.byref(model)))
            _check(lib.onyx_session_options_set_devices(handle, ','.join(devices).encode()))
            threads = _lib.threads_option('SessionOptions.intra_op_num_threads',
                                          so.intra_op_num_threads)
            _lib.int_option('SessionOptions.inter_op_num_threads', so.inter_op_num_threads)  # unused
            _check(lib.onyx_session_options_set_threads(handle, threads))
            _check(lib.onyx_session_options_set_optimization(handle, _onyx_level(so.graph_optimization_level)))
            memory_limit = _lib.int_option('SessionOptions.memory_limit',
                                           getattr(so, 'memory_limit', 0) or 0, 0, _lib.SIZE_MAX)
            if memory_limit:
                _check(lib.onyx_session_options_set_memory_limit(handle, memory_limit))
            self._profile_start = time.time_ns()
            if so.enable_profiling:
                now = datetime.datetime.now()   # onnxruntime's name: PREFIX_date_time_ms.json
                path = f'{so.profile_file_prefix}_{now:%Y-%m-%d_%H-%M-%S}_{now.microsecond // 1000:03d}.json'
                _check(lib.onyx_session_options_set_profiling(handle, path.encode()))
            self._set_log(handle, so)
            self._set_optimized_model(handle, so)
            for key, value in so._config.items():
                if key.startswith(ONYX_CONFIG_NAMESPACES) and key not in ONYX_SESSION_CONFIG:
                    continue   # onnxruntime's own in onyx's namespaces (ORT_IGNORED_CONFIG)
                code = lib.onyx_session_options_set_config(handle, key.encode(), value.encode())
                # onnxruntime's own keys elsewhere: accepted, no effect; onyx's: a bad value refused
                if code != 0 and (code != 1 or key in ONYX_SESSION_CONFIG):
                    _check(code)
            pinned = self._add_free_dims(handle, model, so._free_dims, self._denoted_dims(so), arena)
            rep = ctypes.POINTER(Rep)()
            # the session takes the model over (its weights then held once, as packed)
            owned, model = model, None
            _check(lib.onyx_prepare_session_owning(owned, handle, ctypes.byref(rep)))
            self._log(1, f'session created: {self._model_path or "model bytes"} on '
                         f'{",".join(devices)}, providers {used}')
            self._rep = rep
        finally:
            arena.free()
            if model is not None:
                lib.onyx_model_free(model)
            lib.onyx_session_options_free(handle)
        self._inputs = _io(lib.onyx_rep_input_count, lib.onyx_rep_input, self._rep)
        for arg in self._inputs:   # inputs pinned by free dimension overrides read as pinned
            if arg.name in pinned:
                arg.shape = list(pinned[arg.name])
        self._outputs = _io(lib.onyx_rep_output_count, lib.onyx_rep_output, self._rep)
        self._map_values = self._map_types()
        self._input_index = {a.name: a for a in self._inputs}
        self._c_names = {}   # tuple of input names -> their C array, per order given
        self._output_index = {a.name: i for i, a in enumerate(self._outputs)}
        self._plan = CallPlan(self._rep, self._inputs, self._outputs)

    def _map_types(self):
        """For a model with map inputs or outputs (ai.onnx.ml DictVectorizer, ZipMap): their
        NodeArg.type as onnxruntime writes it ("map(int64,tensor(float))") and {input: numpy dtype of
        its values}, read from the model with the onnx package (without it, "map")."""
        if not any(a.kind_code == KIND_MAP or a.type == 'seq(tensor(undefined))'
                   for a in self._inputs + self._outputs):
            return {}
        try:
            proto = _onnx_model(self._model_path, self._model_bytes, 'map inputs')
        except _lib.NotImplemented:
            return {}

        def name(t):
            kind = t.WhichOneof('value')
            if kind == 'tensor_type':
                return f'tensor({lib.onyx_dtype_name(t.tensor_type.elem_type).decode()})'
            if kind == 'sequence_type':
                return f'seq({name(t.sequence_type.elem_type)})'
            if kind == 'map_type':
                return (f'map({lib.onyx_dtype_name(t.map_type.key_type).decode()},'
                        f'{name(t.map_type.value_type)})')
            return None
        types = {vi.name: vi.type for vi in list(proto.graph.input) + list(proto.graph.output)}
        values = {}
        for arg in self._inputs + self._outputs:
            t = types.get(arg.name)
            if t is None or 'map' not in (name(t) or ''):
                continue
            arg.type = name(t)
            if t.WhichOneof('value') == 'map_type' and t.map_type.value_type.WhichOneof('value') == 'tensor_type':
                try:
                    values[arg.name] = numpy_dtype(t.map_type.value_type.tensor_type.elem_type)
                except TypeError:
                    pass
        return values

    def _log(self, level, text):
        """A log line of the Python layer, through the session's logger when its level lets it."""
        if level >= self._log_level and self._log_fn is not None:
            self._log_fn(None, level, text.encode('utf-8', 'replace'))

    def _set_log(self, handle, so):
        level = _log_level('SessionOptions.log_severity_level', so.log_severity_level)
        self._log_level = level
        logid = so.logid or 'InferenceSession'

        callback = _default_logger_callback

        def emit(user, lvl, message):  # noqa: ARG001
            if callback is not None:
                try:   # onnxruntime's (severity, category, logid, code_location, message)
                    callback(int(lvl), 'onyx', logid, '', message.decode('utf-8', 'replace'))
                except Exception:  # noqa: BLE001 (a callback that raises is ignored, as onnxruntime)
                    pass
                return
            try:
                now = datetime.datetime.now().strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]
                sys.stderr.write(f'{now} [{"VIWEF"[max(0, min(4, lvl))]}:onyx:{logid}] '
                                 f'{message.decode("utf-8", "replace")}\n')
            except Exception:  # noqa: BLE001 (never raise into the library)
                pass
        self._log_fn = LogFn(emit)
        _check(lib.onyx_session_options_set_log(handle, level, self._log_fn, None))

    def _denoted_dims(self, so):
        """{input name: [value or None per dim]} of the overrides by denotation (dims are denoted in
        the model's ValueInfo, read with the onnx package)."""
        if not so._free_denotations:
            return {}
        proto = _onnx_model(self._model_path, self._model_bytes, 'add_free_dimension_override_by_denotation')
        return {vi.name: [so._free_denotations.get(d.denotation) if d.denotation else None
                          for d in vi.type.tensor_type.shape.dim] for vi in proto.graph.input}

    @staticmethod
    def _add_free_dims(handle, model, free_dims, denoted, arena):
        """Inputs whose symbolic dims are all overridden (by name or denotation) get an example of that
        shape: onyx plans them at prepare, and the input reads as that shape."""
        pinned = {}
        if not free_dims and not denoted:
            return pinned
        for arg in _io(lib.onyx_model_input_count, lib.onyx_model_input, model):
            if arg.kind_code not in (0, KIND_TENSOR) or arg.shape is None:
                continue
            by_position = denoted.get(arg.name) or [None] * len(arg.shape)
            dims = [d if isinstance(d, int) else by_position[i] if i < len(by_position) and
                    by_position[i] is not None else free_dims.get(d) for i, d in enumerate(arg.shape)]
            if any(d is None for d in dims) or all(isinstance(d, int) for d in arg.shape):
                continue
            try:
                example = np.zeros(dims, numpy_dtype(arg.dtype_code))
            except TypeError:
                continue
            _check(lib.onyx_session_options_add_example(handle, arg.name.encode(), to_value(example, arena)))
            pinned[arg.name] = dims
        return pinned

    # -- description

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        """Initializers that are also graph inputs, as onnxruntime lists them (they may be fed)."""
        names = self._overridable()
        return [a for a in self._overriding(names).get_inputs() if a.name in names] if names else []

    def _overridable(self):
        """The names of the main graph's initializers that are also its inputs (read once)."""
        if self._overridable_names is None:
            try:
                self._overridable_names = _model_wire.overridable_initializers(self._proto_bytes())
            except _model_wire.WireError as e:   # onyx loaded it: only if the file changed since
                _raise(_lib.InvalidProtobuf, 'ONYX_ERR_INVALID_MODEL', f'reading the model again: {e}')
        return self._overridable_names

    def _proto_bytes(self):
        if self._model_bytes is not None:
            return self._model_bytes
        with open(self._model_path, 'rb') as f:
            return f.read()

    def _overriding(self, names):
        """The session of this model where the initializers `names` are inputs."""
        with self._variants_lock:
            if self._variants is None:
                self._variants = {}
            variant = self._variants.pop(names, None)
            if variant is None:
                variant = InferenceSession.__new__(InferenceSession)
                variant._rep = None
                variant._log_fn = None
                variant._model_path = None
                variant._model_bytes = _model_wire.without_initializers(self._proto_bytes(), names)
                variant._model_dir = self._model_dir if self._model_path is None else \
                    os.fsencode(os.path.dirname(os.path.abspath(self._model_path)))
                variant._sess_options = copy.copy(self._sess_options)
                variant._sess_options.optimized_model_filepath = ''   # the caller's session wrote it
                variant._meta = self._meta
                variant._create([(p, self._provider_options.get(p, {})) for p in self._providers], None)
                if len(self._variants) >= self._VARIANTS_KEPT:   # freed when no run holds it
                    self._variants.pop(next(iter(self._variants)))
            self._variants[names] = variant   # the most recently used last
            return variant

    def get_modelmeta(self):
        return self._meta

    def get_providers(self):
        return list(self._providers)

    def get_provider_options(self):
        return {k: dict(v) for k, v in self._provider_options.items()}

    def set_providers(self, providers=None, provider_options=None):
        """Re-creates the session for these providers; RuntimeError for a name that is no provider at
        all, as onnxruntime (a known one that is not usable here is skipped with a warning)."""
        for name, _ in _provider_list(providers, provider_options):
            if name not in _ALL_PROVIDERS + [TEST]:
                raise RuntimeError(f'Unknown Provider Type: {name}')
        self._create(providers, provider_options)

    def get_input_memory_infos(self):
        """Where each input is read from: CPU memory, or the first device's for a session on one."""
        return [self._memory_info() for _ in self._inputs]

    def get_output_memory_infos(self):
        return [self._memory_info() for _ in self._outputs]

    def get_input_epdevices(self):
        """onnxruntime's OrtEpDevice per input: None (onyx has no plugin execution providers)."""
        return [None for _ in self._inputs]

    def _memory_info(self):
        if self._providers and self._providers[0] == CUDA:
            return OrtMemoryInfo('Cuda', OrtAllocatorType.ORT_ARENA_ALLOCATOR,
                                 int(self._provider_options[CUDA].get('device_id', 0)), OrtMemType.DEFAULT)
        return OrtMemoryInfo('Cpu', OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, OrtMemType.DEFAULT)

    def get_provider_graph_assignment_info(self):
        """onnxruntime's record of which provider runs which nodes, with the session config entry
        "session.record_ep_graph_assignment_info" = "1": for a CPU-only session every node, each in
        its own subgraph, on CPUExecutionProvider (the node list read with the onnx package); onyx
        does not report per-node placement across devices."""
        if self._sess_options._config.get('session.record_ep_graph_assignment_info') != '1':
            _raise(_lib.Fail, 'ONYX_ERR_INVALID_ARGUMENT',
                   "Session configuration entry 'session.record_ep_graph_assignment_info' must be set to "
                   '"1" to get the provider graph assignment info')
        if self._providers != [CPU]:
            _raise(_lib.NotImplemented, 'ONYX_ERR_UNSUPPORTED',
                   'get_provider_graph_assignment_info: onyx reports node placement for CPU-only sessions')
        proto = _onnx_model(self._model_path, self._model_bytes, 'record_ep_graph_assignment_info')
        return [_EpSubgraph(CPU, [_AssignedNode(n.domain, n.op_type, n.name)]) for n in proto.graph.node]

    def run_async(self, output_names, input_feed, callback, user_data, run_options=None):
        """Runs on a thread of a shared pool and returns at once; then calls
        callback(outputs, user_data, error) with error '' on success, or (None, user_data, message)."""
        def work():
            try:
                results = self._run(output_names, input_feed, run_options)
            except Exception as e:  # noqa: BLE001 (handed to the callback, as onnxruntime)
                callback(None, user_data, str(e) or type(e).__name__)
                return
            callback(results, user_data, '')
        _async_pool().submit(work)

    def disable_fallback(self):
        pass

    def enable_fallback(self):
        pass

    def get_session_options(self):
        return self._sess_options

    def get_profiling_start_time_ns(self):
        return self._profile_start

    def end_profiling(self):
        """Writes the profile recorded so far; returns the trace file's name ('' when profiling is
        off)."""
        if not self._sess_options.enable_profiling or self._rep is None:
            return ''
        path = ctypes.c_char_p()
        _check(lib.onyx_rep_end_profiling(self._rep, ctypes.byref(path)))
        return path.value.decode() if path.value else ''

    # -- runs

    def _run(self, output_names, input_feed, run_options, output_device=b'CPU', adapters=True,
             targets=None):
        """Python values of the outputs named (all when None or empty), in that order. With an
        output device, outputs left there come back as _DeviceTensor (owning their memory).
        adapters: feed the parameters of run_options' active LoRA adapters. targets: output name ->
        numpy array the run writes that output into (onyx_rep_run_into), which comes back as it;
        arrays it cannot write where they are (see _values.target_value) get the run's own value
        back, for the caller to copy into."""
        if self._rep is None:
            _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT', 'the session is closed')
        if output_names:
            missing = [n for n in output_names if n not in self._output_index]
            if missing:
                _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT',
                       f'Invalid output name: {missing[0]} (the model has {list(self._output_index)})')
            wanted = [self._output_index[n] for n in output_names]
        else:
            wanted = list(range(len(self._outputs)))
        if not isinstance(input_feed, dict):
            raise TypeError(f'input_feed must be a dict, not {type(input_feed).__name__}')
        if len(input_feed) < len(self._inputs):
            self._check_missing(input_feed)   # the caller's feed, before adapters, as onnxruntime
        if adapters and run_options is not None and run_options._adapters:
            input_feed = _with_adapters(input_feed, run_options._adapters)
        overridden = frozenset(n for n in input_feed if n not in self._input_index)
        if overridden:   # initializers to feed, or names the model lacks
            known = self._overridable()
            unknown = [n for n in input_feed if n in overridden and n not in known]
            if unknown:
                self._check_missing(input_feed)
                also = f' and the initializers {sorted(known)}, which may be fed' if known else ''
                _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT',
                       f'Invalid input name: {unknown[0]} (the model has {list(self._input_index)}{also})')
            variant = self._overriding(overridden)
            if output_device == b'CPU' and not targets:
                results = variant._run_fast(output_names, input_feed, run_options)
                if results is not NOT_HANDLED:
                    return results
            return variant._run(output_names, input_feed, run_options, output_device, adapters=False,
                                targets=targets)
        arena = Arena()
        count = ctypes.c_size_t()
        outs = Value_pp()
        try:
            values = []
            for name, x in input_feed.items():
                arg = self._input_index[name]   # other names were refused or sent on above
                if type(x) is not np.ndarray:
                    if isinstance(x, (OrtValue, SparseTensor)):
                        x = x._value if isinstance(x, OrtValue) else x
                        if isinstance(x, SparseTensor):
                            _raise(_lib.NotImplemented, 'ONYX_ERR_UNSUPPORTED',
                                   f'input {name}: onyx runs no graph on sparse tensor inputs')
                    elif arg.kind_code == KIND_TENSOR and not isinstance(x, _DeviceTensor):
                        x = _as_input_array(x, arg)
                    elif isinstance(x, dict) and arg.name in self._map_values and x:
                        # Python numbers as the map's value type, as onnxruntime takes them
                        x = dict(zip(x, np.asarray(list(x.values()), dtype=self._map_values[arg.name])))
                values.append(x.handle if isinstance(x, _DeviceTensor) else to_value(x, arena, arg.kind_code))
            names = tuple(input_feed)
            c_names = self._c_names.get(names)
            if c_names is None:   # the C array of names, kept per order given
                c_names = (ctypes.c_char_p * max(len(names), 1))(*[n.encode() for n in names])
                if len(self._c_names) < 64:
                    self._c_names[names] = c_names
            if output_device != b'CPU':
                if run_options is None:
                    run_options = RunOptions()
                _check(lib.onyx_run_options_set_output_device(run_options._handle, output_device))
            handle = run_options._handle if run_options is not None else None
            bound = {}
            for name, x in (targets or {}).items():
                v = x.handle if isinstance(x, _DeviceTensor) else target_value(x, arena)
                if v is not None:
                    bound[name] = v
            try:
                if bound:
                    t_names = (ctypes.c_char_p * len(bound))(*[n.encode() for n in bound])
                    _check(lib.onyx_rep_run_into(self._rep, handle, len(values), c_names,
                                                 values_array(values), len(bound), t_names,
                                                 values_array(list(bound.values())),
                                                 ctypes.byref(count), ctypes.byref(outs)))
                else:
                    _check(lib.onyx_rep_run_with_options(self._rep, handle, len(values), c_names,
                                                         values_array(values), ctypes.byref(count),
                                                         ctypes.byref(outs)))
            finally:
                if output_device != b'CPU':
                    _check(lib.onyx_run_options_set_output_device(run_options._handle, b'CPU'))
        finally:
            arena.free()
        try:
            results = []
            for i in wanted:
                if self._outputs[i].name in bound:   # written where the caller wants it
                    results.append(targets[self._outputs[i].name])
                elif output_device != b'CPU' and lib.onyx_tensor_device(outs[i]) not in (None, b'CPU'):
                    kind = 'test' if lib.onyx_tensor_device(outs[i]) == b'TEST' else 'cuda'
                    results.append(_DeviceTensor(ctypes.cast(outs[i], Value_p), kind))
                    outs[i] = None   # owned by the _DeviceTensor now
                else:
                    results.append(take_output(outs, i))
            return results
        finally:
            lib.onyx_values_free(outs, count.value)

    def _check_missing(self, input_feed):
        missing = [a.name for a in self._inputs if a.name not in input_feed]
        if missing:   # onnxruntime's words (its Python layer's ValueError)
            raise ValueError(f'Required inputs ({missing}) are missing from input feed ({list(input_feed)}).')

    def run(self, output_names, input_feed, run_options=None):
        """Outputs named in output_names (all when None), as numpy arrays (lists for sequences,
        None for empty optionals)."""
        if run_options is None:   # the common call: straight to the fast path (_call.py)
            if self._rep is not None and type(input_feed) is dict:
                results = self._plan.run(output_names, input_feed, None)
                if results is not NOT_HANDLED:
                    return results
        elif not run_options._adapters:
            results = self._run_fast(output_names, input_feed, run_options)
            if results is not NOT_HANDLED:
                return results
        return self._run(output_names, input_feed, run_options)

    def _run_fast(self, output_names, input_feed, run_options):
        """run's one-call path (_call.py), or NOT_HANDLED when the call is off it."""
        if self._rep is None or type(input_feed) is not dict:
            return NOT_HANDLED
        return self._plan.run(output_names, input_feed,
                              run_options._handle.value if run_options is not None else None)

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        return [OrtValue(v) for v in self._run(output_names, input_dict_ort_values, run_options)]

    def run_with_ortvaluevector(self, run_options, feed_names, feeds, fetch_names, fetches, fetch_devices):  # noqa: ARG002
        results = self._run(fetch_names, dict(zip(feed_names, feeds)), run_options)
        fetches.extend(OrtValue(v) for v in results)

    def io_binding(self):
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        iobinding._run(run_options)

    # -- lifetime

    def _close(self):
        self._variants = None   # freed when no run holds them
        rep = getattr(self, '_rep', None)
        if rep is not None:
            self._rep = None
            lib.onyx_rep_free(rep)

    def __del__(self):
        self._close()


def _with_adapters(input_feed, adapters):
    """The feed with the adapters' parameters added, as onnxruntime binds them: each the input of
    its name, over a value the feed gives for it too, the adapter added first winning."""
    feed = dict(input_feed)
    for adapter in reversed(adapters):
        feed.update(adapter._params)
    return feed


def _as_input_array(x, arg):
    """A list or scalar given for a tensor input, as an array of the input's declared type (as
    onnxruntime converts them)."""
    if arg.dtype_code == 8:   # strings
        return np.asarray(x, dtype=object)
    try:
        dtype = numpy_dtype(arg.dtype_code)
    except TypeError:
        return np.asarray(x)
    return np.asarray(x, dtype=dtype)


_POOL = []
_POOL_LOCK = threading.Lock()


def _async_pool():
    """The thread pool of run_async (made on first use; its threads wait in the library's runs with
    the GIL released)."""
    with _POOL_LOCK:
        if not _POOL:
            _POOL.append(concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2),
                                                               thread_name_prefix='onyx-run-async'))
        return _POOL[0]


class _AssignedNode:
    def __init__(self, domain, op_type, name):
        self.domain, self.op_type, self.name = domain, op_type, name


class _EpSubgraph:
    def __init__(self, ep_name, nodes):
        self.ep_name = ep_name
        self._nodes = nodes

    def get_nodes(self):
        return list(self._nodes)


class OrtValueVector(list):
    """onnxruntime's C-level vector of OrtValues."""


class _CSession:
    """onnxruntime's C-level session object (`InferenceSession._sess`), for code that reaches it."""

    def __init__(self, session):
        self._session = session

    def run_with_ort_values(self, feeds, output_names, run_options=None):
        return OrtValueVector(OrtValue(v) for v in self._session._run(output_names, feeds, run_options))

    def run(self, output_names, input_feed, run_options=None):
        return self._session._run(output_names, input_feed, run_options)

    @property
    def session_options(self):
        return self._session._sess_options


def _options_from_model(so, meta):
    """A copy of `so` with the session options a model carries in its "ort_config" metadata (JSON
    {"session_options": {...}}, as onnxruntime reads when ORT_LOAD_CONFIG_FROM_MODEL=1): threads,
    execution_mode, graph_optimization_level, enable_profiling; other keys are ignored, as there."""
    text = meta.custom_metadata_map.get('ort_config')
    if text is None:
        return so
    try:
        config = json.loads(text).get('session_options', {})
    except (ValueError, AttributeError) as e:
        _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT',
               f"Json stored in the `ort_config` key cannot be parsed. Error message: {e}")
    so = copy.copy(so)
    fields = {'intra_op_num_threads': None, 'inter_op_num_threads': None,
              'execution_mode': ExecutionMode, 'graph_optimization_level': GraphOptimizationLevel,
              'enable_profiling': bool}
    for key, value in config.items():
        if key not in fields:
            continue
        if not isinstance(value, int) or isinstance(value, bool):
            _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT',
                   f'{key} option in the model file must be an integer')
        kind = fields[key]
        try:
            setattr(so, key, kind(value) if kind is not None else _lib.int_option(key, value))
        except ValueError:
            _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT',
                   f'Unsupported {key} value in ORT config: {value}')
    return so


def _onnx_model(path, data, option):
    """The ModelProto (external data not loaded), for the options that rewrite the model."""
    try:
        import onnx
    except ImportError:
        _raise(_lib.NotImplemented, 'ONYX_ERR_UNSUPPORTED',
               f'SessionOptions.{option} needs the onnx package (pip install onnx)')
    if path is not None:
        return onnx.load_model(path, load_external_data=False)
    return onnx.load_model_from_string(bytes(data))


def _rewritten_model(path, data, so):
    """(bytes, base folder) of the model with the initializers SessionOptions replaces
    (add_initializer, add_external_initializers, ..._from_files_in_memory); (None, None) to load the
    file as it is. Each name or file given must be one the model has."""
    if not so._initializers and not so._external_files:
        return (None, None) if path is not None else (data, None)
    from onnx import TensorProto, numpy_helper
    proto = _onnx_model(path, data, 'add_initializer')
    base = os.path.dirname(os.path.abspath(path)) if path is not None else None
    used = set()
    for i, t in enumerate(proto.graph.initializer):
        if t.name in so._initializers:
            arr = so._initializers[t.name]
            if int(t.data_type) != dtype_code(arr.dtype) or tuple(t.dims) != arr.shape:
                _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT',
                       f"initializer '{t.name}' is {lib.onyx_dtype_name(t.data_type).decode()}{list(t.dims)}; "
                       f'the value given is {arr.dtype}{list(arr.shape)}')
            proto.graph.initializer[i].CopyFrom(numpy_helper.from_array(arr, t.name))
            used.add(t.name)
        elif t.data_location == TensorProto.EXTERNAL:
            info = {e.key: e.value for e in t.external_data}
            blob = so._external_files.get(os.path.normpath(info.get('location', '')))
            if blob is None:
                continue
            offset, length = int(info.get('offset', 0)), info.get('length')
            chunk = blob[offset:offset + int(length)] if length is not None else blob[offset:]
            t.raw_data = chunk
            del t.external_data[:]
            t.data_location = TensorProto.DEFAULT
            used.add(os.path.normpath(info['location']))
    unknown = sorted(set(so._initializers) - used) + sorted(set(so._external_files) - used)
    if unknown:
        _raise(_lib.InvalidArgument, 'ONYX_ERR_INVALID_ARGUMENT',
               f'SessionOptions: the model has no initializer or external data file {unknown[0]!r}')
    return proto.SerializeToString(), (base.encode() if base else None)


def _io(count, get, owner):
    out = []
    info = _lib.IoInfo()
    for i in range(count(owner)):
        _check(get(owner, i, ctypes.byref(info)))
        out.append(NodeArg(info))
    return out


__all__ = ['InferenceSession', 'SessionOptions', 'RunOptions', 'OrtValue', 'IOBinding', 'ModelMetadata',
           'GraphOptimizationLevel', 'ExecutionMode', 'ExecutionOrder', 'get_available_providers',
           'get_all_providers', 'get_device', 'set_default_logger_severity', 'set_seed', 'model_metadata',
           'get_version_string', 'get_build_info', 'enable_telemetry_events', 'disable_telemetry_events',
           'set_default_logger_callback', 'OrtDevice', 'OrtMemoryInfo', 'OrtMemType', 'OrtAllocatorType',
           'OrtDeviceMemoryType', 'OrtMemoryInfoDeviceType', 'OrtDeviceVendorId', 'OrtSparseFormat',
           'OrtArenaCfg', 'create_and_register_allocator', 'create_and_register_allocator_v2',
           'OrtValueVector', 'is_dlpack_uint8_tensor', 'SparseTensor', 'AdapterFormat', 'LoraAdapter']
