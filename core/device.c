/* Device names for messages, logs and profiles. */
#include "core/device.h"

const char *device_name(device_kind kind) {
    switch (kind) {
    case DEVICE_CPU: return "CPU";
    case DEVICE_CUDA: return "CUDA";
    case DEVICE_TEST: return "TEST";
    }
    return "?";
}
