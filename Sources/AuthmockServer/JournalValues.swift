import AuthmockCore
import Foundation

// The journal keeps up to `journal_max_bytes` of entries for as long as a
// server runs. Token ids and body hashes were its only heap strings (four
// per refresh grant), and held for seconds between token records of other
// lifetimes they fragmented the heap: a 32 MiB journal cost 55-90 MB of RSS
// in the soak (bench/README.md). The shapes the server itself produces are
// kept inline here; on the wire they are the same strings as before.

/// A token id in a journal entry: an access token's `jti` (a lowercase
/// UUID), a refresh token's id (`rt_` and hex), or any other text a client
/// sent, kept as it is.
struct JournalID: Sendable, Hashable, Codable {
    private enum Storage: Sendable, Hashable {
        /// The 32 hex digits of a lowercase UUID, as two words.
        case uuid(UInt64, UInt64)
        case refreshID(UInt64)
        case text(String)
    }
    private var storage: Storage

    init(_ text: String) {
        storage = Self.compact(text) ?? .text(text)
    }

    var text: String {
        switch storage {
        case .uuid(let high, let low):
            Self.uuidText(high: high, low: low)
        case .refreshID(let value): Self.refreshPrefix + String(value, radix: 16)
        case .text(let text): text
        }
    }

    /// Bytes on the heap beyond the entry itself.
    var heapBytes: Int {
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

/// A request body's SHA-256: the 32 bytes inline, spelled as lowercase hex.
/// Anything else (a hand-made entry in a test or a decoded report) is kept
/// as text.
struct BodyDigest: Sendable, Hashable, Codable {
    private enum Storage: Sendable, Hashable {
        case sha256(UInt64, UInt64, UInt64, UInt64)
        case text(String)
    }
    private var storage: Storage

    init(sha256 bytes: some Sequence<UInt8>) {
        let bytes = Array(bytes)
        precondition(bytes.count == 32, "a SHA-256 is 32 bytes")
        func word(_ at: Int) -> UInt64 { bytes[at..<at + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        storage = .sha256(word(0), word(8), word(16), word(24))
    }

    private init(storage: Storage) { self.storage = storage }

    init(_ text: String) {
        let nibbles = text.utf8.compactMap { $0.hexDigitValue(lowercaseOnly: true) }
        if text.utf8.count == 64, nibbles.count == 64 {
            self.init(sha256: stride(from: 0, to: 64, by: 2).map { nibbles[$0] << 4 | nibbles[$0 + 1] })
        } else {
            self.init(storage: .text(text))
        }
    }

    var text: String {
        switch storage {
        case .sha256(let a, let b, let c, let d):
            [a, b, c, d].flatMap { word in (0..<8).reversed().map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } }.hexString
        case .text(let text): text
        }
    }

    var heapBytes: Int {
        if case .text(let text) = storage { return text.heapBytes }
        return 0
    }
}

// On the wire both are their text.
extension JournalID {
    init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode(String.self)) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

extension BodyDigest {
    init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode(String.self)) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

extension String {
    /// What this string holds on the heap: nothing for up to 15 UTF-8 bytes
    /// (stored inline), else a native string object of 32 bytes of header,
    /// the bytes and a terminator, in a malloc chunk (8 bytes of overhead,
    /// 16-byte granules).
    var heapBytes: Int {
        let count = utf8.count
        return count <= 15 ? 0 : (32 + count + 1 + 8 + 15) & ~15
    }
}
