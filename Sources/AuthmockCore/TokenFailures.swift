/// Why an access token was not accepted. Each case has its own row in the
/// error table of every dialect, so a client's logs say exactly what it sent.
public enum AccessTokenFailure: String, Sendable, CaseIterable, Codable {
    /// No token at all (no `Authorization` header, or an empty one).
    case missing
    /// Not three base64url parts of JSON, or claims of the wrong shape.
    case malformed
    /// `alg` is not HS256: `none`, another HMAC, RSA, anything else.
    case wrongAlgorithm = "wrong_algorithm"
    /// HS256, but not signed with this server's key (forged or tampered).
    case badSignature = "bad_signature"
    /// `aud` does not name this server's API.
    case wrongAudience = "wrong_audience"
    /// Signed with this server's key, but `iss` names another issuer.
    case wrongIssuer = "wrong_issuer"
    /// `nbf`/`iat` lie ahead of the server clock.
    case notYetValid = "not_yet_valid"
    /// `exp` (or a forced expiry) is at or before the server clock.
    case expired
    /// Revoked directly, through its family, or unknown to this server run.
    case revoked
}

/// Why a refresh token was refused.
public enum RefreshTokenFailure: String, Error, CaseIterable, Codable {
    /// Never issued by this server run (garbage, or from before a restart).
    case unknown
    /// Past its lifetime on the server clock.
    case expired
    /// Revoked directly, or its family was revoked.
    case revoked
    /// Already exchanged (rotated) and past the grace window: RFC 9700 reuse
    /// detection, which revokes the whole family.
    case reused
    /// Issued to another client.
    case clientMismatch = "client_mismatch"
}

/// Why an authorization code could not be redeemed.
public enum AuthorizationCodeFailure: String, Error, CaseIterable {
    case unknown, expired, used
    case clientMismatch = "client_mismatch"
    case redirectMismatch = "redirect_mismatch"
    case pkceMismatch = "pkce_mismatch"
    case pkceMissing = "pkce_missing"
}
