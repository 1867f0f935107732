"""include/onyx.h is the one place the session config keys are documented: its table
(onyx_session_options_set_config) must list exactly the keys the library reads, each with a
default the library accepts, so that the documentation cannot drift from the code unseen."""
import ctypes
import os
import re

from onyx import _lib, ort

HEADER = os.path.join(os.path.dirname(__file__), '..', '..', 'include', 'onyx.h')


def documented_keys():
    """{key: default} from the table: rows ' *   KEY  VALUES  DEFAULT  meaning', columns apart by
    two spaces or more."""
    text = open(HEADER, encoding='utf-8').read()
    block = text[text.index('/* Named settings'):text.index('onyx_session_options_set_config(')]
    rows = re.findall(r'^ \*   ([a-z0-9_]+(?:\.[a-z0-9_]+)+) {2,}\S.*? {2,}("[^"]*"|\d+) {2,}', block, re.M)
    return {key: default.strip('"') for key, default in rows}


def set_config(key, value):
    handle = ctypes.c_void_p()
    assert _lib.lib.onyx_session_options_create(ctypes.byref(handle)) == 0
    try:
        code = _lib.lib.onyx_session_options_set_config(handle, key.encode(), value.encode())
        return code, _lib.lib.onyx_last_error().decode()
    finally:
        _lib.lib.onyx_session_options_free(handle)


def test_the_header_lists_every_key_the_library_reads():
    keys = documented_keys()
    assert len(keys) == 9, keys
    assert set(keys) == set(ort.ONYX_SESSION_CONFIG)
    # the library's own list, as its refusal of an unknown key names it
    code, message = set_config('no.such.key', '1')
    assert code == 1
    known = message[message.index('(known: ') + len('(known: '):message.rindex(')')].split(', ')
    assert set(known) == set(keys), message


def test_each_documented_default_is_accepted():
    for key, default in documented_keys().items():
        code, message = set_config(key, default)
        assert code == 0, f'{key}={default!r}: {message}'
