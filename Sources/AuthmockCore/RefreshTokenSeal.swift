import Crypto
import Foundation

/// Refresh token values: 45 bytes, base64url (60 characters, one part):
/// version, expiry (seconds since 1970), family id, 16 random bytes, and the
/// first 12 bytes of an HMAC-SHA256 over them with a key derived from the
/// signing key. Opaque to clients; to the server, proof of which login a
/// token belonged to after its record is gone.
public struct RefreshTokenSeal: Sendable {
    private let key: SymmetricKey
    private static let version: UInt8 = 1

    init(signingKey: SigningKey) {
        // A key of its own: a refresh token's MAC can never pass for a JWT signature.
        let derived = HMAC<SHA256>.authenticationCode(for: Data("authmock refresh token seal v1".utf8), using: signingKey.key)
        key = SymmetricKey(data: Data(derived))
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

    /// The family and expiry sealed in `value`, when this server sealed it.
    func open(_ value: String) -> (family: String, expiresAt: Date)? {
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
