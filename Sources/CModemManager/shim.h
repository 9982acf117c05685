#pragma once
#include <libmm-glib.h>

/// Connects `handler` to an object's "notify" signal (one of its D-Bus properties changed);
/// `destroy` releases `user_data` when the handler is disconnected. A typed wrapper of the
/// macro-built `g_signal_connect_data` call.
typedef void (*CMMNotifyHandler)(GObject *object, GParamSpec *property, gpointer user_data);
static inline gulong cmm_connect_notify(gpointer object, CMMNotifyHandler handler, gpointer user_data, GClosureNotify destroy) {
    return g_signal_connect_data(object, "notify", G_CALLBACK(handler), user_data, destroy, 0);
}

/// The manager as the GDBusObjectManager it is (a GObject cast, a macro).
static inline GDBusObjectManager *cmm_manager_object_manager(MMManager *manager) { return G_DBUS_OBJECT_MANAGER(manager); }

/// The object as an MMObject (a GObject cast, a macro).
static inline MMObject *cmm_object(gpointer object) { return MM_OBJECT(object); }
