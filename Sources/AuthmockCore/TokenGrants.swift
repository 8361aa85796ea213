import DriverProtocol
public import Foundation
import JWTKit

// What the token core hands out and answers: issued tokens, the grant an
// access token carries, a refresh token's state, introspection.

/// Tokens handed out by one grant: what every dialect encodes in its own shape.
public struct IssuedTokens: Sendable, Equatable {
    public var accessToken: String
    /// The ids as the store keeps them (the journal takes them as they are).
    public var accessKey: TokenID
    public var accessTokenID: String { accessKey.text }
    public var expiresIn: Int
    public var refreshToken: String?
    public var refreshKey: TokenID?
    public var refreshTokenID: String? { refreshKey?.text }
    public var scope: String
    public var familyID: String?
    /// An OpenID Connect ID token, when the scope has `openid` (docs/oidc.md).
    public var idToken: String? = nil
}

/// A verified, live access token.
public struct AccessGrant: Sendable, Equatable {
    public var claims: AccessTokenClaims
    /// The `jti`, read once when the token was first verified.
    public var key: TokenID
    public var tokenID: String { claims.jti.value }
    public var subject: String { claims.sub.value }
    public var scopes: [String] { claims.scopes }

    /// Whether the token grants `scope`: one of the space-separated words
    /// of its `scope` claim. Asked on every request, so it walks the bytes
    /// in place (a lazy split of the UTF-8 view cost ~1,200 instructions).
    public func grants(scope: String) -> Bool {
        var granted = claims.scope
        var wanted = scope
        return granted.withUTF8 { granted in
            wanted.withUTF8 { wanted in
                var start = 0
                while start < granted.count {
                    var end = start
                    while end < granted.count, granted[end] != UInt8(ascii: " ") { end += 1 }
                    if end - start == wanted.count, wanted.count > 0,
                        memcmp(granted.baseAddress! + start, wanted.baseAddress!, wanted.count) == 0
                    {
                        return true
                    }
                    start = end + 1
                }
                return false
            }
        }
    }
}

/// A presented token as a cache key: compared whole, hashed by its last
/// bytes (its signature's, which differ between any two tokens this server
/// signed). Hashing all ~400 bytes on every request cost ~3,000
/// instructions, 1.5 % of an /api/me request. Only verified tokens are
/// stored, so nobody can choose the tails that share a bucket.
struct TokenText: Hashable {
    var text: String

    init(_ text: String) { self.text = text }

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { bytes in
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.suffix(16))))
        }
    }
}

public enum AccessVerification: Sendable, Equatable {
    case valid(AccessGrant)
    /// `tokenID` is the `jti` when the token could be read at all.
    case invalid(AccessTokenFailure, tokenID: String?)
}

/// What the server knows about a presented refresh token, without using it.
public struct RefreshTokenInfo: Sendable, Equatable {
    public var id: String
    public var familyID: String
    public var subject: String
    public var clientID: String
    public var scope: String
    public var expiresAt: Date
    /// `nil` when the token is usable now.
    public var failure: RefreshTokenFailure?
    /// Already exchanged once (usable only inside the reuse grace window).
    public var rotated: Bool
}

/// RFC 7662 view of a token.
public enum Introspection: Sendable, Equatable {
    case inactive
    case access(AccessGrant)
    case refresh(RefreshTokenInfo)
}
