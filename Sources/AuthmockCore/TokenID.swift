import Foundation

/// A token id as the server keeps it: an access token's `jti` (a lowercase
/// UUID) or a refresh token's id (`rt_` and hex) inline, any other text (a
/// client's own, a test's) as it is. The in-memory token store's tables are
/// keyed by it and the journal records it: as strings, the ids were a heap
/// object each (80 bytes for a `jti`) in the server's largest tables.
public struct TokenID: Sendable, Hashable, Codable, CustomStringConvertible {
    private enum Storage: Sendable, Hashable {
        /// The 32 hex digits of a lowercase UUID, as two words.
        case uuid(UInt64, UInt64)
        case refreshID(UInt64)
        case text(String)
    }
    private var storage: Storage

    private init(storage: Storage) { self.storage = storage }

    public init(_ text: String) {
        storage = Self.compact(text) ?? .text(text)
    }

    public var text: String {
        switch storage {
        case .uuid(let high, let low):
            Self.uuidText(high: high, low: low)
        case .refreshID(let value): Self.refreshPrefix + String(value, radix: 16)
        case .text(let text): text
        }
    }

    /// Bytes on the heap beyond the entry itself.
    public var heapBytes: Int {
        if case .text(let text) = storage { return text.heapBytes }
        return 0
    }

    private static let refreshPrefix = "rt_"

    /// The inline form, only when it spells `text` back exactly.
    private static func compact(_ text: String) -> Storage? {
        let utf8 = text.utf8
        if utf8.count == 36 { return uuid(utf8).map { .uuid($0.high, $0.low) } }
        guard utf8.count > 3, utf8.count <= 19, text.hasPrefix(refreshPrefix) else { return nil }
        let digits = utf8.dropFirst(3)
        // Without leading zeros: what `String(_:radix:)` spells.
        guard digits.first != UInt8(ascii: "0") || digits.count == 1 else { return nil }
        var value: UInt64 = 0
        for byte in digits {
            guard let nibble = byte.hexDigitValue(lowercaseOnly: true) else { return nil }
            value = value << 4 | UInt64(nibble)
        }
        return .refreshID(value)
    }

    /// A lowercase 8-4-4-4-12 UUID's digits. By hand: Foundation's
    /// `UUID(uuidString:)` took ~450 ns, 1 % of an /api/me request; and on
    /// the contiguous bytes: `enumerated()` over the UTF-8 view cost ~4,000
    /// instructions per entry (callgrind, bench/README.md), this ~300.
    private static func uuid(_ utf8: String.UTF8View) -> (high: UInt64, low: UInt64)? {
        let parsed = utf8.withContiguousStorageIfAvailable { bytes -> (high: UInt64, low: UInt64)? in
            var words: (high: UInt64, low: UInt64) = (0, 0)
            var digits = 0
            for offset in bytes.indices {
                let byte = bytes[offset]
                if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                    guard byte == UInt8(ascii: "-") else { return nil }
                    continue
                }
                guard let nibble = byte.hexDigitValue(lowercaseOnly: true) else { return nil }
                if digits < 16 { words.high = words.high << 4 | UInt64(nibble) } else { words.low = words.low << 4 | UInt64(nibble) }
                digits += 1
            }
            return words
        }
        // A string without contiguous UTF-8 (none the server makes) is kept as text.
        return parsed ?? nil
    }

    private static func uuidText(high: UInt64, low: UInt64) -> String {
        var text = (withUnsafeBytes(of: high.bigEndian, Array.init) + withUnsafeBytes(of: low.bigEndian, Array.init)).hexString
        for offset in [8, 13, 18, 23] { text.insert("-", at: text.index(text.startIndex, offsetBy: offset)) }
        return text
    }
}

extension TokenID {
    public var description: String { text }

    /// A new random (version 4) UUID, as `UUID().uuidString.lowercased()`
    /// would spell it, without making the string.
    public static func randomUUID() -> TokenID {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() & ~0xF000 | 0x4000  // version 4
        let low = generator.next() & ~(0xC << 60) | (0x8 << 60)  // RFC 4122 variant
        return TokenID(storage: .uuid(high, low))
    }

    /// A new access token's `jti`: a version 8 UUID (RFC 9562, a layout of
    /// its own) that says in which order this process issued it and the
    /// microseconds of its issue time, beside 40 random bits. The in-memory
    /// store keeps no record per access token: a token it no longer lists is
    /// judged from its claims, and these two are what its claims lack (which
    /// of a login's steps came after it, and its exact issue time: `iat` is
    /// a whole second, and the token lives its lifetime from the exact time).
    static func accessID(sequence: UInt64, issuedAt: Date) -> TokenID {
        var generator = SystemRandomNumberGenerator()
        let seconds = issuedAt.timeIntervalSince1970
        let fraction = seconds - seconds.rounded(.down)
        // Zero only for a whole second (then `iat` is the exact issue time).
        let microseconds = fraction > 0 ? UInt64(max(1, min(999_999, (fraction * 1_000_000).rounded(.down)))) : 0
        let high = (sequence & 0xFFFF_FFFF_FFFF) << 16 | 0x8000 | (generator.next() & 0xFFF)  // version 8
        let low = 0x8 << 60 | microseconds << 40 | (generator.next() & 0xFF_FFFF_FFFF)  // RFC 9562 variant
        return TokenID(storage: .uuid(high, low))
    }

    /// The issue order `accessID` wrote; nil for any other id.
    var accessSequence: UInt64? {
        guard case .uuid(let high, let low) = storage, high & 0xF000 == 0x8000, low >> 62 == 0b10 else { return nil }
        return high >> 16
    }

    /// The fraction of a second `accessID` wrote, in microseconds.
    var issueMicroseconds: UInt64? {
        guard accessSequence != nil, case .uuid(_, let low) = storage else { return nil }
        return (low >> 40) & 0xF_FFFF
    }

    /// A new random refresh token id (`rt_` and 16 hex digits at most), as
    /// `RandomToken.shortID(prefix: "rt_")` spells one, without the string.
    public static func randomRefreshID() -> TokenID {
        var generator = SystemRandomNumberGenerator()
        return TokenID(storage: .refreshID(generator.next()))
    }

    // On the wire its text.
    public init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode(String.self)) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

extension String {
    /// What this string holds on the heap: nothing for up to 15 UTF-8 bytes
    /// (stored inline), else a native string object of 32 bytes of header,
    /// the bytes and a terminator, in a malloc chunk (8 bytes of overhead,
    /// 16-byte granules).
    public var heapBytes: Int {
        let count = utf8.count
        return count <= 15 ? 0 : (32 + count + 1 + 8 + 15) & ~15
    }
}
