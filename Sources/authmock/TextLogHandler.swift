import Logging

/// swift-log's `StreamLogHandler` on stderr (same lines), but it keeps the
/// logger's metadata as given and renders it only when a line is written.
/// `StreamLogHandler` renders all of its metadata on every change, and
/// Hummingbird tags each request's logger with a request id: that rendering
/// cost about a microsecond per request at the default level, for a line
/// that `warning` never writes (bench/README.md).
struct TextLogHandler: LogHandler {
    private var output: StreamLogHandler
    var metadata: Logger.Metadata = [:]

    init(label: String, logLevel: Logger.Level) {
        output = StreamLogHandler.standardError(label: label, metadataProvider: nil)
        output.logLevel = logLevel
    }

    var logLevel: Logger.Level {
        get { output.logLevel }
        set { output.logLevel = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        // The line's own metadata wins over the logger's, as in StreamLogHandler.
        event.metadata = metadata.merging(event.metadata ?? [:]) { $1 }
        output.log(event: event)
    }
}
