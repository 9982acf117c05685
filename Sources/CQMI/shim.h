#pragma once
#include <libqmi-glib.h>

/// Creates a QmiDevice for `file` with `device-no-file-check` set, so that libqmi does not look
/// the file up in sysfs to detect its transport (the caller opens it in QMI mode explicitly);
/// finish with `qmi_device_new_finish`. A typed wrapper of the variadic `g_async_initable_new_async`.
static inline void cqmi_device_new_no_file_check(GFile *file, GCancellable *cancellable,
                                                 GAsyncReadyCallback callback, gpointer user_data) {
    g_async_initable_new_async(QMI_TYPE_DEVICE, G_PRIORITY_DEFAULT, cancellable, callback, user_data,
                               QMI_DEVICE_FILE, file, QMI_DEVICE_NO_FILE_CHECK, TRUE, NULL);
}

/// The GObject casts (macros) of the clients cellpath uses.
static inline QmiClientDms *cqmi_client_dms(QmiClient *client) { return QMI_CLIENT_DMS(client); }
static inline QmiClientNas *cqmi_client_nas(QmiClient *client) { return QMI_CLIENT_NAS(client); }
static inline QmiClientWds *cqmi_client_wds(QmiClient *client) { return QMI_CLIENT_WDS(client); }
static inline QmiClientWda *cqmi_client_wda(QmiClient *client) { return QMI_CLIENT_WDA(client); }
static inline QmiClientUim *cqmi_client_uim(QmiClient *client) { return QMI_CLIENT_UIM(client); }
static inline QmiClientLoc *cqmi_client_loc(QmiClient *client) { return QMI_CLIENT_LOC(client); }

/// Connects `handler` to a client's indication signal (`"serving-system"` of a NAS client,
/// `"packet-service-status"` of a WDS client), whose argument is the indication's output;
/// `destroy` releases `user_data` when the handler is disconnected.
typedef void (*CQmiIndicationHandler)(QmiClient *client, gpointer output, gpointer user_data);
static inline gulong cqmi_client_connect_indication(QmiClient *client, const gchar *signal, CQmiIndicationHandler handler,
                                                    gpointer user_data, GClosureNotify destroy) {
    return g_signal_connect_data(client, signal, G_CALLBACK(handler), user_data, destroy, 0);
}
