import CGLib

/// What a URL setting is checked by, from GLib's strict RFC 3986 parser (`g_uri_parse`); nil
/// when the text is not an absolute URI.
struct URIParts {
    var scheme: String
    var host: String?
    var hasUserInfo: Bool
    var hasQuery: Bool
    var hasFragment: Bool

    init?(_ text: String) {
        guard let uri = g_uri_parse(text, G_URI_FLAGS_NONE, nil) else { return nil }
        defer { g_uri_unref(uri) }
        scheme = String(cString: g_uri_get_scheme(uri))
        host = g_uri_get_host(uri).map { String(cString: $0) }
        hasUserInfo = g_uri_get_userinfo(uri) != nil
        hasQuery = g_uri_get_query(uri) != nil
        hasFragment = g_uri_get_fragment(uri) != nil
    }
}
