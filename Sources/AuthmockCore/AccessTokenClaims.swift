public import DriverProtocol
import Foundation
public import JWTKit

/// Claims of an access token, following the JWT dialect for OAuth 2.0 access
/// tokens (RFC 9068). `sid` names the refresh-token family (one login) the
/// token belongs to, so revoking a family reaches its access tokens too.
/// A dialect's `jwt:` may leave `aud` and `nbf` out and add claims
/// (`token_use`, `username`): `extra`, written into the token and not read
/// back (verification needs only the claims above).
public struct AccessTokenClaims: JWTPayload, Equatable {
    public var iss: IssuerClaim
    public var sub: SubjectClaim
    public var aud: AudienceClaim?
    public var exp: ExpirationClaim
    public var iat: IssuedAtClaim
    public var nbf: NotBeforeClaim?
    public var jti: IDClaim
    public var clientID: String
    public var scope: String
    public var sid: String
    public var extra: [String: ClaimValue] = [:]

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nbf, jti, scope, sid
        case clientID = "client_id"
    }

    public init(
        iss: IssuerClaim, sub: SubjectClaim, aud: AudienceClaim?, exp: ExpirationClaim, iat: IssuedAtClaim, nbf: NotBeforeClaim?, jti: IDClaim,
        clientID: String, scope: String, sid: String, extra: [String: ClaimValue] = [:]
    ) {
        (self.iss, self.sub, self.aud, self.exp, self.iat, self.nbf, self.jti) = (iss, sub, aud, exp, iat, nbf, jti)
        (self.clientID, self.scope, self.sid) = (clientID, scope, sid)
        self.extra = extra.filter { CodingKeys(rawValue: $0.key) == nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decode(IssuerClaim.self, forKey: .iss)
        sub = try container.decode(SubjectClaim.self, forKey: .sub)
        aud = try container.decodeIfPresent(AudienceClaim.self, forKey: .aud)
        exp = try container.decode(ExpirationClaim.self, forKey: .exp)
        iat = try container.decode(IssuedAtClaim.self, forKey: .iat)
        nbf = try container.decodeIfPresent(NotBeforeClaim.self, forKey: .nbf)
        jti = try container.decode(IDClaim.self, forKey: .jti)
        clientID = try container.decode(String.self, forKey: .clientID)
        scope = try container.decode(String.self, forKey: .scope)
        sid = try container.decode(String.self, forKey: .sid)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: ClaimKey.self)
        func key(_ key: CodingKeys) -> ClaimKey { ClaimKey(stringValue: key.stringValue) }
        try container.encode(iss, forKey: key(.iss))
        try container.encode(sub, forKey: key(.sub))
        try container.encodeIfPresent(aud, forKey: key(.aud))
        try container.encode(exp, forKey: key(.exp))
        try container.encode(iat, forKey: key(.iat))
        try container.encodeIfPresent(nbf, forKey: key(.nbf))
        try container.encode(jti, forKey: key(.jti))
        try container.encode(clientID, forKey: key(.clientID))
        try container.encode(scope, forKey: key(.scope))
        try container.encode(sid, forKey: key(.sid))
        for (name, value) in extra { try container.encode(value, forKey: ClaimKey(stringValue: name)) }
    }

    public var scopes: [String] { scope.split(separator: " ").map(String.init) }

    /// Expiry, audience and revocation are judged by `TokenAuthority` against
    /// the virtual clock, not here: jwt-kit's own check would read wall time.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}
