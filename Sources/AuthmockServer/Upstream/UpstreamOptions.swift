public import AuthmockCore
public import Foundation

/// What `authmock proxy` forwards to, and what it does on the way.
public struct UpstreamOptions: Sendable, Equatable {
    /// The backend's base URL: `http` or `https`, a host, an optional port
    /// and an optional path every forwarded path is put under.
    public var url: URL
    /// An access token this many seconds old (by the proxy's clock) is
    /// answered with the dialect's expired answer, not forwarded.
    public var expireAfterSeconds: Double?
    /// How long a forwarded request may take, connecting included.
    public var timeoutSeconds: Double = 30
    /// A PEM file of certificates trusted for an `https` backend beside the
    /// system's roots (`--upstream-ca`: a development backend's self-signed one).
    public var trustedCertificatesFile: String? = nil

    /// Checks `text` is a base URL a proxy can forward to.
    public init(url text: String, expireAfterSeconds: Double? = nil) throws(SettingsError) {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { throw SettingsError("--upstream '\(text)' is no http:// or https:// URL with a host (e.g. http://127.0.0.1:8000)") }
        guard url.query == nil, url.fragment == nil else { throw SettingsError("--upstream '\(text)': a base URL has no query or fragment") }
        if let seconds = expireAfterSeconds, !(seconds > 0 && seconds.isFinite) {
            throw SettingsError("--expire-after must be a positive number of seconds, got \(seconds)")
        }
        self.url = url
        self.expireAfterSeconds = expireAfterSeconds
    }

    /// The upstream URL of a request's path and query.
    public func target(path: String, query: String?) -> String {
        var base = url.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return base + path + (query.map { "?" + $0 } ?? "")
    }
}
