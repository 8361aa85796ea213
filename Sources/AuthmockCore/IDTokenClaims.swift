import Crypto
public import DriverProtocol
public import Foundation
public import JWTKit

/// A user's configured claim (`users[].claims`): any JSON value, copied as
/// it is into id tokens and the userinfo answer.
public typealias ClaimValue = JSONValue

/// An OpenID Connect ID token (OIDC Core section 2): who signed in, for
/// which client, when; `nonce` echoes the authorization request, `at_hash`
/// binds the access token issued beside it. A user's configured claims
/// (`users[].claims`) are added; they never replace these.
public struct IDTokenClaims: JWTPayload, Equatable {
    public var iss: IssuerClaim
    public var sub: SubjectClaim
    public var aud: AudienceClaim
    public var exp: ExpirationClaim
    public var iat: IssuedAtClaim
    /// When the user signed in: the login's start, also on refreshed id tokens (OIDC Core 12.2).
    public var authTime: Date
    public var nonce: String?
    public var atHash: String?
    public var azp: String
    /// The login (refresh-token family) the token belongs to.
    public var sid: String?
    public var extra: [String: ClaimValue] = [:]

    enum CodingKeys: String, CodingKey, CaseIterable {
        case iss, sub, aud, exp, iat, nonce, azp, sid
        case authTime = "auth_time", atHash = "at_hash"
    }

    public init(
        iss: String, sub: String, aud: String, exp: Date, iat: Date, authTime: Date, nonce: String?, atHash: String?, sid: String?,
        extra: [String: ClaimValue]
    ) {
        self.iss = .init(value: iss)
        self.sub = .init(value: sub)
        self.aud = .init(value: [aud])
        self.exp = .init(value: exp)
        self.iat = .init(value: iat)
        self.authTime = authTime
        self.nonce = nonce
        self.atHash = atHash
        self.azp = aud
        self.sid = sid
        self.extra = extra.filter { CodingKeys(rawValue: $0.key) == nil && !["auth_time", "at_hash"].contains($0.key) }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decode(IssuerClaim.self, forKey: .iss)
        sub = try container.decode(SubjectClaim.self, forKey: .sub)
        aud = try container.decode(AudienceClaim.self, forKey: .aud)
        exp = try container.decode(ExpirationClaim.self, forKey: .exp)
        iat = try container.decode(IssuedAtClaim.self, forKey: .iat)
        authTime = Date(timeIntervalSince1970: try container.decode(Double.self, forKey: .authTime))
        nonce = try container.decodeIfPresent(String.self, forKey: .nonce)
        atHash = try container.decodeIfPresent(String.self, forKey: .atHash)
        azp = try container.decode(String.self, forKey: .azp)
        sid = try container.decodeIfPresent(String.self, forKey: .sid)
        let all = try decoder.container(keyedBy: ClaimKey.self)
        for key in all.allKeys where CodingKeys(stringValue: key.stringValue) == nil {
            extra[key.stringValue] = try all.decode(ClaimValue.self, forKey: key)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        // One container for the standard claims and the configured ones.
        var container = encoder.container(keyedBy: ClaimKey.self)
        func key(_ key: CodingKeys) -> ClaimKey { ClaimKey(stringValue: key.stringValue) }
        try container.encode(iss, forKey: key(.iss))
        try container.encode(sub, forKey: key(.sub))
        try container.encode(aud, forKey: key(.aud))
        try container.encode(Int(exp.value.timeIntervalSince1970), forKey: key(.exp))
        try container.encode(Int(iat.value.timeIntervalSince1970), forKey: key(.iat))
        try container.encode(Int(authTime.timeIntervalSince1970), forKey: key(.authTime))
        try container.encodeIfPresent(nonce, forKey: key(.nonce))
        try container.encodeIfPresent(atHash, forKey: key(.atHash))
        try container.encode(azp, forKey: key(.azp))
        try container.encodeIfPresent(sid, forKey: key(.sid))
        for (name, value) in extra { try container.encode(value, forKey: ClaimKey(stringValue: name)) }
    }

    /// Times are judged by the client under test, not here.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}

    /// OIDC Core 3.1.3.6: base64url of the left half of the SHA-256 of the
    /// access token's ASCII (every algorithm here hashes with SHA-256).
    public static func accessTokenHash(_ accessToken: String) -> String {
        Data(SHA256.hash(data: Data(accessToken.utf8)).prefix(16)).base64URLEncodedString()
    }
}

/// A claim's name as a coding key: configured and dialect claims have any name.
struct ClaimKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
