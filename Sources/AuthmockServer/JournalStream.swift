import AuthmockCore
import AuthmockModel
import Foundation
import HTTPTypes
import Hummingbird

/// `GET /_authmock/journal` written as the client reads it: a page of
/// entries at a time, each fetched when the one before has gone out. A
/// client that reads slowly, or not at all, holds one page of this server's
/// memory, not the whole journal (20 stalled readers of a 28 MB journal
/// used to hold a copy each: 770 MB). The answer ends where the journal
/// stood when it began, so a busy server cannot make it endless.
enum JournalStream {
    /// Entries read from the journal at a time (each read filters it whole).
    static let pageSize = 2000
    /// Entries encoded into one write: a write waits until the client has
    /// taken the one before, so this bounds what a stalled reader holds.
    static let chunkSize = 32

    /// The first page is read before the answer starts, so a journal that
    /// cannot be read is still a clean 503 rather than a cut answer.
    static func response(_ control: MockControl, _ filter: JournalFilter, encoder: JSONEncoder) async throws(ControlInputError) -> Response {
        var filter = filter
        filter.through = try await control.journalLastSequence()
        let wanted = filter.limit ?? .max
        var firstPage = filter
        firstPage.limit = min(pageSize, wanted)
        let first = try await control.journalEntries(firstPage)
        let body = ResponseBody { [firstPage] writer in
            var page = firstPage
            var current = first
            var written = 0
            var last: Int? = nil
            var buffer = ByteBuffer(string: #"{"entries":["#)
            while true {
                for start in stride(from: 0, to: current.entries.count, by: chunkSize) {
                    let chunk = current.entries[start..<min(start + chunkSize, current.entries.count)]
                    if let bytes = try? encoder.encode(Array(chunk)), bytes.count > 2 {
                        if written > 0 { buffer.writeString(",") }
                        buffer.writeBytes(bytes.dropFirst().dropLast())
                    }
                    written += chunk.count
                    try await writer.write(buffer)
                    buffer.clear()
                }
                last = current.entries.last?.seq ?? last
                guard current.entries.count == page.limit, written < wanted, let next = last else { break }
                page.since = next
                page.limit = min(pageSize, wanted - written)
                current = try await control.journalEntries(page)
            }
            let usage = try await control.journalUsage()
            buffer.writeString(#"],"dropped":\#(current.dropped),"held":\#(usage.entries),"heldBytes":\#(usage.bytes)"#)
            if let last { buffer.writeString(#","last":\#(last)"#) }
            buffer.writeString("}")
            try await writer.write(buffer)
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "application/json"], body: body)
    }
}
