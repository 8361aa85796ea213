import Foundation

/// `--shard K/N`: which case runs one of N CI machines takes. The runs are
/// dealt out in suite order, one to each shard in turn, so every run lands
/// in exactly one shard and the shards differ by at most one run; the same
/// suite and filters give the same split on every machine.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    /// 1-based.
    public var index: Int
    public var count: Int

    /// Parses `K/N` with 1 <= K <= N; nil otherwise.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1, (1...count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    public var description: String { "\(index)/\(count)" }

    public func select<T>(_ runs: [T]) -> [T] {
        runs.enumerated().filter { $0.offset % count == index - 1 }.map(\.element)
    }
}
