import Crypto
import Foundation
import JWTKit

/// The HS256 secret. Its bytes never leave this type except into jwt-kit; the
/// key id is a hash prefix, so logs and headers can name the key safely.
public struct SigningKey: Sendable {
    let key: SymmetricKey
    /// `kid` header value: first 8 bytes of SHA-256 over the key, hex.
    public let id: String
    /// True when no key was configured and one was drawn at start.
    public let isRandom: Bool

    /// RFC 7518 section 3.2: an HS256 key MUST be at least 256 bits, and
    /// jwt-kit enforces it, so a short secret is refused here with a reason.
    public init(secret: String) throws(SettingsError) {
        guard secret.utf8.count >= 32 else {
            throw SettingsError("the HS256 signing key must be at least 32 bytes (RFC 7518 section 3.2), got \(secret.utf8.count)")
        }
        self.init(key: SymmetricKey(data: Data(secret.utf8)), isRandom: false)
    }

    public static func random() -> SigningKey {
        SigningKey(key: SymmetricKey(size: .bits256), isRandom: true)
    }

    init(key: SymmetricKey, isRandom: Bool) {
        self.key = key
        self.isRandom = isRandom
        let digest = key.withUnsafeBytes { SHA256.hash(data: Data($0)) }
        self.id = digest.prefix(8).hexString
    }
}

/// Opaque random strings for refresh tokens, authorization codes and ids.
enum RandomToken {
    /// `bytes` random bytes, base64url without padding (32 bytes = 256 bits).
    static func make(bytes: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        let raw = (0..<bytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(raw).base64URLEncodedString()
    }

    /// A short hex id for journal and listing output.
    static func shortID(prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        return prefix + String(UInt64.random(in: .min ... .max, using: &generator), radix: 16)
    }
}
