import Crypto
import DriverProtocol
import Foundation
import Synchronization

/// Refresh token values: 45 bytes, base64url (60 characters, one part):
/// version, expiry (seconds since 1970), family id, 16 random bytes, and the
/// first 12 bytes of an HMAC-SHA256 over them with a key derived from the
/// signing key. Opaque to clients; to the server, proof of which login a
/// token belonged to after its record is gone. A dialect whose backend
/// issues JWT refresh tokens (`jwt.refresh_claims`) gets the
/// same seal as the JWT's `jti` (`RefreshJWT`).
public struct RefreshTokenSeal: Sendable {
    private let key: SymmetricKey
    private let jwt: RefreshJWT?
    private static let version: UInt8 = 1

    /// `jwtClaims` given: refresh tokens are JWTs with these claims added, `iss` read from `issuer` when one is made.
    init(signingKey: SigningKey, jwtClaims: [String: String]? = nil, issuer: IssuerName = IssuerName("")) {
        // A key of its own: a refresh token's MAC can never pass for a JWT signature.
        let derived = HMAC<SHA256>.authenticationCode(for: Data("authmock refresh token seal v1".utf8), using: signingKey.key)
        key = SymmetricKey(data: Data(derived))
        jwt = jwtClaims.map { RefreshJWT(signingKey: signingKey, claims: $0, issuer: issuer) }
    }

    /// The value a client receives for a new refresh token of `owner`'s login.
    func token(owner: TokenOwner, issuedAt: Date, expiresAt: Date) -> String {
        let sealed = make(family: owner.familyID ?? "", expiresAt: expiresAt)
        return jwt?.token(sealed: sealed, owner: owner, issuedAt: issuedAt, expiresAt: expiresAt) ?? sealed
    }

    func make(family: String, expiresAt: Date) -> String {
        var bytes: [UInt8] = [Self.version]
        bytes += withUnsafeBytes(of: Int64(expiresAt.timeIntervalSince1970.rounded(.up)).bigEndian, Array.init)
        bytes += withUnsafeBytes(of: (UInt64(family.dropFirst(4), radix: 16) ?? 0).bigEndian, Array.init)
        var generator = SystemRandomNumberGenerator()
        bytes += (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes += Array(HMAC<SHA256>.authenticationCode(for: bytes, using: key)).prefix(12)
        return Data(bytes).base64URLEncodedString()
    }

    /// The family and expiry sealed in `value` (or in its JWT's `jti`), when this server sealed it.
    func open(_ value: String) -> (family: String, expiresAt: Date)? {
        if let jwt, value.utf8.count > 60 {
            guard let sealed = jwt.sealed(in: value) else { return nil }
            return openSealed(sealed)
        }
        return openSealed(value)
    }

    private func openSealed(_ value: String) -> (family: String, expiresAt: Date)? {
        guard value.utf8.count == 60, let data = Data(base64URLEncoded: value), data.count == 45, data.first == Self.version else { return nil }
        let bytes = Array(data)
        let mac = HMAC<SHA256>.authenticationCode(for: bytes[0..<33], using: key)
        // Every byte compared, whatever differs first.
        guard zip(Array(mac).prefix(12), bytes[33..<45]).reduce(UInt8(0), { $0 | ($1.0 ^ $1.1) }) == 0 else { return nil }
        let expiry = bytes[1..<9].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        let family = bytes[9..<17].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return ("fam_" + String(family, radix: 16), Date(timeIntervalSince1970: Double(expiry)))
    }
}

/// The server's `iss`, fixed once its address is known (port 0), read by
/// whatever signs a token.
public final class IssuerName: Sendable {
    private let value: Mutex<String>
    init(_ initial: String) { value = Mutex(initial) }
    var text: String {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

/// JWT refresh tokens, as some servers issue them (`typ: Refresh`, HS512 with a
/// key of the server's own): clients of such servers decode them and
/// read `exp`. The seal is the `jti`, so the server still needs no record
/// to know the token; the signature keeps a `jti` from being moved into
/// another token.
struct RefreshJWT: Sendable {
    let key: SymmetricKey
    let claims: [String: String]
    let issuer: IssuerName
    private static let header = Data(#"{"alg":"HS512","typ":"JWT"}"#.utf8).base64URLEncodedString()

    init(signingKey: SigningKey, claims: [String: String], issuer: IssuerName) {
        let derived = HMAC<SHA256>.authenticationCode(for: Data("authmock refresh token jwt v1".utf8), using: signingKey.key)
        key = SymmetricKey(data: Data(derived))
        self.claims = claims
        self.issuer = issuer
    }

    func token(sealed: String, owner: TokenOwner, issuedAt: Date, expiresAt: Date) -> String {
        var payload: [String: Any] = claims.mapValues { TokenShape.filled($0, user: owner.subject, clientID: owner.clientID) }
        let iss = issuer.text
        // `exp - iat` is the lifetime exactly, as the vendor's (`refresh_expires_in`); the record's own end is at most a second later.
        let iat = Int(issuedAt.timeIntervalSince1970.rounded(.down))
        payload.merge(
            [
                "exp": iat + Int(expiresAt.timeIntervalSince(issuedAt).rounded()), "iat": iat, "jti": sealed, "iss": iss, "aud": iss,
                "sub": owner.subject, "azp": owner.clientID, "sid": owner.familyID ?? "", "scope": owner.scope,
            ], uniquingKeysWith: { _, standard in standard })
        let body = (try? JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        let signingInput = Self.header + "." + body.base64URLEncodedString()
        let signature = Data(HMAC<SHA512>.authenticationCode(for: Data(signingInput.utf8), using: key)).base64URLEncodedString()
        return signingInput + "." + signature
    }

    /// The `jti` of a refresh JWT this server signed; nil for anything else.
    func sealed(in value: String) -> String? {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Self.header, let signature = Data(base64URLEncoded: String(parts[2])) else { return nil }
        let signingInput = Data(value.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard HMAC<SHA512>.isValidAuthenticationCode(signature, authenticating: signingInput, using: key),
            let payload = Data(base64URLEncoded: String(parts[1])),
            let object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
        else { return nil }
        return object["jti"] as? String
    }
}

extension RefreshTokenSeal {
    /// Refresh tokens as a server issues them (JWTs with `jwtClaims` given),
    /// each sealed with a key of its own: a dialect file's pattern for its
    /// backend's refresh tokens must take authmock's, or no refresh would pass.
    public static func examples(jwtClaims: [String: String]?, count: Int = 8) -> [String] {
        (0..<count).map { n in
            let seal = RefreshTokenSeal(signingKey: .random(), jwtClaims: jwtClaims, issuer: IssuerName("http://127.0.0.1:8080"))
            let owner = TokenOwner(
                familyID: "fam_\(String(n * 7919 + 1, radix: 16))", subject: "alice@example.com", clientID: "demo", scope: "read write")
            let now = Date()
            return seal.token(owner: owner, issuedAt: now, expiresAt: now.addingTimeInterval(Double(n + 1) * 86_400))
        }
    }
}
