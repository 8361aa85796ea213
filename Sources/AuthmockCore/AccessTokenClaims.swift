import Foundation
public import JWTKit

/// Claims of an access token, following the JWT profile for OAuth 2.0 access
/// tokens (RFC 9068). `sid` names the refresh-token family (one login) the
/// token belongs to, so revoking a family reaches its access tokens too.
public struct AccessTokenClaims: JWTPayload, Equatable {
    public var iss: IssuerClaim
    public var sub: SubjectClaim
    public var aud: AudienceClaim
    public var exp: ExpirationClaim
    public var iat: IssuedAtClaim
    public var nbf: NotBeforeClaim
    public var jti: IDClaim
    public var clientID: String
    public var scope: String
    public var sid: String

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nbf, jti, scope, sid
        case clientID = "client_id"
    }

    public var scopes: [String] { scope.split(separator: " ").map(String.init) }

    /// Expiry, audience and revocation are judged by `TokenAuthority` against
    /// the virtual clock, not here: jwt-kit's own check would read wall time.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}
