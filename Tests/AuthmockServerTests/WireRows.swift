import AuthmockServer

/// The answers the app-backend dialects gave when they were written in Swift,
/// kept apart from their files (dialects/*.yaml): the files must go on
/// answering exactly these (status, code, message), so a change to a file
/// that changes the wire fails here. `when` is left empty: the docs' words
/// are the files' own.
private func wire(_ profile: String, _ status: Int, _ code: String, _ message: String) -> ErrorRow {
    ErrorRow(profile: profile, status: status, code: code, message: message, when: "")
}

enum EnvelopeError {
    static let wrongCredentials = wire("envelope", 401, "40100", "Wrong username or password")
    static let accessExpired = wire("envelope", 401, "40101", "Expired token")
    static let refreshExpired = accessExpired
    static let accessInvalid = wire("envelope", 401, "40102", "Invalid token")
    static let accessRevoked = accessInvalid
    static let refreshUnknown = accessInvalid
    static let refreshRevoked = accessInvalid
    static let refreshReused = accessInvalid
    static let malformedToken = wire("envelope", 401, "40103", "Malformed token")
    static let missingToken = wire("envelope", 401, "40104", "Token type mismatch or missing")
    static let refreshAsAccess = missingToken
    static let accessAsRefresh = missingToken
    static let unsupportedToken = wire("envelope", 401, "40105", "Unsupported token")
    static let missingParameter = wire("envelope", 400, "40000", "Missing parameter")
    static let invalidParameter = wire("envelope", 400, "40002", "Invalid parameter format")
    static let malformedJSON = wire("envelope", 400, "40007", "Malformed JSON")
    static let accessDenied = wire("envelope", 403, "40300", "Access denied")
    static let notFound = wire("envelope", 404, "40400", "Unknown endpoint")
    static let methodNotAllowed = wire("envelope", 405, "40500", "Method not allowed")
    static let payloadTooLarge = wire("envelope", 413, "41300", "Payload too large")
}

enum ReissueError {
    static let refreshExpired = wire("reissue", 406, "refresh_token_expired", "Refresh token expired: sign in again")
    static let refreshRevoked = wire("reissue", 406, "refresh_token_revoked", "Refresh token revoked: sign in again")
    static let refreshReused = wire("reissue", 406, "refresh_token_reused", "Refresh token already used: sign in again")
    static let refreshUnknown = wire("reissue", 406, "refresh_token_invalid", "Refresh token invalid: sign in again")
    static let accessMismatch = wire("reissue", 406, "access_token_mismatch", "Access token does not belong to this refresh token")
}

enum RenewalError {
    static let refreshExpired = wire("renewal", 401, "refresh_token_expired", "Refresh token expired")
    static let refreshRevoked = wire("renewal", 401, "refresh_token_revoked", "Refresh token revoked")
    static let refreshReused = wire("renewal", 401, "refresh_token_reused", "Refresh token already used")
    static let refreshUnknown = wire("renewal", 401, "refresh_token_invalid", "Refresh token invalid")
    static let accessMismatch = wire("renewal", 401, "access_token_mismatch", "Access token does not match the refresh token")
    static let missingAuthorization = wire("renewal", 401, "token_missing", "Send the old access token as Bearer")
}

/// The body and resource answers reissue, renewal and header-rotation share.
enum BackendError {
    static let wrongCredentials = wire("plain", 401, "bad_credentials", "Wrong username or password")
    static let missingField = wire("plain", 400, "missing_field", "Missing required field")
    static let invalidField = wire("plain", 400, "invalid_field", "Field has the wrong type")
    static let malformedJSON = wire("plain", 400, "malformed_json", "Body is not valid JSON")
    static let missingToken = wire("plain", 401, "token_missing", "No access token")
    static let tokenExpired = wire("plain", 401, "token_expired", "Access token expired")
    static let tokenRevoked = wire("plain", 401, "token_revoked", "Access token revoked")
    static let tokenInvalid = wire("plain", 401, "token_invalid", "Access token invalid")
    static let refreshAsAccess = wire("plain", 401, "token_invalid", "A refresh token is not an access token")
    static let accessDenied = wire("plain", 403, "access_denied", "Access token lacks the required scope")
}

enum HeaderRotationError {
    static let refreshExpired = wire("header-rotation", 401, "refresh_token_expired", "Refresh token expired: sign in again")
    static let refreshRevoked = wire("header-rotation", 401, "refresh_token_revoked", "Refresh token revoked: sign in again")
    static let refreshUnknown = wire("header-rotation", 401, "refresh_token_invalid", "Refresh token invalid: sign in again")
}
