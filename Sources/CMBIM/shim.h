#pragma once
#include <libmbim-glib.h>

/// Connects `handler` to the device's "device-removed" signal (the port hung up: the modem was
/// unplugged or reset); `destroy` releases `user_data` when the handler is disconnected.
/// A typed wrapper of the macro-built `g_signal_connect_data` call.
typedef void (*CMbimDeviceRemovedHandler)(MbimDevice *device, gpointer user_data);
static inline gulong cmbim_device_connect_removed(MbimDevice *device, CMbimDeviceRemovedHandler handler,
                                                  gpointer user_data, GClosureNotify destroy) {
    return g_signal_connect_data(device, MBIM_DEVICE_SIGNAL_REMOVED, G_CALLBACK(handler), user_data, destroy, 0);
}

/// Connects `handler` to the device's "device-indicate-status" signal (an indication arrived);
/// `destroy` releases `user_data` when the handler is disconnected.
typedef void (*CMbimIndicationHandler)(MbimDevice *device, MbimMessage *message, gpointer user_data);
static inline gulong cmbim_device_connect_indicate_status(MbimDevice *device, CMbimIndicationHandler handler,
                                                          gpointer user_data, GClosureNotify destroy) {
    return g_signal_connect_data(device, MBIM_DEVICE_SIGNAL_INDICATE_STATUS, G_CALLBACK(handler), user_data, destroy, 0);
}
