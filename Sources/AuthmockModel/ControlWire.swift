public import AuthmockCore
public import Foundation

/// The control API's answers on the wire: what `ControlRoutes` encodes and
/// `ControlClient` and `authmock ctl` decode, with the same types and the same time format.
public enum ControlWire {
    /// Writes the control API's answers: sorted keys, times in ISO 8601 with fractional seconds.
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        return encoder
    }()

    /// Reads what `encoder` wrote.
    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 time: \(text)"))
            }
            return date
        }
        return decoder
    }()

    /// `GET /_authmock/journal`.
    public struct JournalPage: Codable, Sendable {
        public var entries: [JournalEntry]
        /// Entries dropped because the journal was full.
        public var dropped: Int
        /// Sequence number of the last entry: pass it as `since` to page on.
        public var last: Int?
        /// Entries the journal holds, and their estimated bytes (bounded by
        /// `journal_limit` and `journal_max_bytes`).
        public var held: Int? = nil
        public var heldBytes: Int? = nil

        public init(entries: [JournalEntry], dropped: Int, last: Int?, held: Int? = nil, heldBytes: Int? = nil) {
            self.entries = entries
            self.dropped = dropped
            self.last = last
            self.held = held
            self.heldBytes = heldBytes
        }
    }
}

/// `GET /_authmock/clock` and the clock operations' answers.
public struct ClockReading: Sendable, Codable, Equatable {
    public var now: Date
    public var offsetSeconds: Double

    public init(now: Date, offsetSeconds: Double) {
        self.now = now
        self.offsetSeconds = offsetSeconds
    }
}

/// The signing keys: the current one and those a rotation retired.
public struct KeysView: Sendable, Codable, Equatable {
    public struct Key: Sendable, Codable, Equatable {
        public var kid: String
        /// `current`, or `retired` (still verifying until `retiredUntil`).
        public var state: String
        public var retiredUntil: Date?

        public init(kid: String, state: String, retiredUntil: Date?) {
            self.kid = kid
            self.state = state
            self.retiredUntil = retiredUntil
        }
    }
    public var algorithm: String
    public var keys: [Key]

    public init(algorithm: String, keys: [Key]) {
        self.algorithm = algorithm
        self.keys = keys
    }
}

/// What a pruning pass removed now, and the totals so far.
public struct PruneReport: Sendable, Codable {
    public var removed: PrunedCounts
    public var total: PrunedCounts

    public init(removed: PrunedCounts, total: PrunedCounts) {
        self.removed = removed
        self.total = total
    }
}
