import Foundation
import Logging

/// One JSON object per log line on stderr, for log collectors
/// (`serve --log-format json`).
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields: [String: Any] = [
            "time": Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
            "level": event.level.rawValue, "label": label, "message": event.message.description,
        ]
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        if !merged.isEmpty { fields["metadata"] = merged.mapValues { $0.description } }
        guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        FileHandle.standardError.write(data + Data("\n".utf8))
    }
}
