public import Foundation

/// The one clock every expiry decision reads: real time plus an offset that a
/// test moves, so a one-hour token can expire without anyone waiting an hour.
public final class VirtualClock: Sendable {
    /// Read by every request: no lock.
    private let offset: AtomicDouble

    /// How far the clock may be moved from real time either way: 100 years.
    /// Every token time stays a representable whole number of seconds (a
    /// far-future offset would trap converting them), and the offset finite.
    public static let maxOffsetSeconds: Double = 3_155_760_000

    public init(offsetSeconds: Double = 0) {
        self.offset = AtomicDouble(offsetSeconds)
    }

    /// The server's current time.
    public func now() -> Date {
        Date().addingTimeInterval(offsetSeconds)
    }

    /// Seconds the virtual clock runs ahead of (or, negative, behind) real time.
    public var offsetSeconds: Double {
        offset.load()
    }

    /// Moves the clock forward; the offset only ever grows by `seconds`.
    public func advance(seconds: Double) {
        offset.add(seconds)
    }

    public func setOffset(seconds: Double) {
        offset.store(seconds)
    }
}

extension Duration {
    /// The duration in seconds, fractions included: for reports, timeouts and
    /// the journal's milliseconds (one conversion, not one per module).
    public var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
