import Foundation

/// What a sign-in or a refresh hands the app.
public struct Credentials: Sendable, Equatable {
    public var accessToken: String
    public var refreshToken: String?
    /// By this device's clock: `expires_in` counted from when the answer
    /// arrived (a device clock minutes off the server's changes nothing).
    public var expiresAt: Date

    public func hasExpired(at now: Date = Date()) -> Bool { now >= expiresAt }
}

/// Why a call did not get an answer from the API.
public enum APIError: Error, Equatable, CustomStringConvertible {
    /// The session is over (no sign-in, a refresh token the server refused,
    /// signed out): the app shows its sign-in screen.
    case signInRequired(String)
    /// The token endpoint could not renew the token now (down, busy, the
    /// connection lost): the session is kept, and a later call tries again.
    /// `status`: the token endpoint's answer, nil when none arrived.
    case refreshUnavailable(status: Int?, reason: String)
    /// No HTTP answer (connection refused or reset, timeout).
    case transport(String)

    public var description: String {
        switch self {
        case .signInRequired(let reason): "sign-in required: \(reason)"
        case .refreshUnavailable(_, let reason): "the token could not be renewed now: \(reason)"
        case .transport(let reason): "no answer: \(reason)"
        }
    }
}
