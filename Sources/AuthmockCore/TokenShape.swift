import Foundation

/// How this server's JWTs differ from authmock's own, where a backend's do:
/// the issuer's path, standard claims access tokens leave out, claims added
/// to access, id and refresh tokens. The core's own type: a dialect's `jwt:`
/// section (DriverProtocol's `JWTShape`) is mapped onto it by the server.
public struct TokenShape: Sendable, Equatable {
    /// Appended to the server's URL in `iss`.
    public var issuerPath: String
    /// Standard claims access tokens leave out: `aud` (then resources do not require it), `nbf`.
    public var accessLeftOut: [String]
    /// Claims added to every access token; `{user}` and `{client_id}` are replaced (`filled`).
    public var accessClaims: [String: String]
    /// Claims of the id token issued beside every access token (nil: an id token only for `openid`).
    public var idTokenClaims: [String: String]?
    /// Given: refresh tokens are JWTs carrying these claims; nil: opaque.
    public var refreshClaims: [String: String]?

    public var accessAudience: Bool { !accessLeftOut.contains("aud") }
    public var accessNotBefore: Bool { !accessLeftOut.contains("nbf") }

    public init(
        issuerPath: String = "", accessLeftOut: [String] = [], accessClaims: [String: String] = [:], idTokenClaims: [String: String]? = nil,
        refreshClaims: [String: String]? = nil
    ) {
        self.issuerPath = issuerPath
        self.accessLeftOut = accessLeftOut
        self.accessClaims = accessClaims
        self.idTokenClaims = idTokenClaims
        self.refreshClaims = refreshClaims
    }

    /// A claim template with the user and the client put in.
    public static func filled(_ value: String, user: String, clientID: String) -> String {
        value.replacingOccurrences(of: "{user}", with: user).replacingOccurrences(of: "{client_id}", with: clientID)
    }
}
