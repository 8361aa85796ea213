import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// The server's one channel handler of its own, with two duties (one
/// handler, not two: each handler a request part passes costs a dynamic
/// cast and a call per part, ~2 % of an /api/me request by callgrind).
///
/// **Read deadline.** Closes a connection whose request stops arriving: the
/// head not complete, or the body stalled, for `timeout` with no new part.
/// Hummingbird's idle timeout covers the time between requests; this covers
/// the time inside one, which a stalled client would otherwise hold (with
/// its descriptor, and shutdown waiting on it) forever. A request that has
/// fully arrived is never cut off, however long its answer takes (a delay
/// fault holds it). Per request it only notes the time: one timer per
/// connection checks the last progress when it fires and re-arms for what
/// is left (as NIO's IdleStateHandler does). Scheduling and cancelling a
/// timer on every request cost more than the rest of the handler chain.
///
/// **Write deadline.** Closes a connection whose answer has not moved for
/// `timeout`: the client reads nothing, the socket and NIO's buffer are
/// full (the channel unwritable). A stalled reader of a long answer (the
/// journal) would otherwise hold its connection, its task and a chunk of
/// the answer forever. It costs nothing per request: only the channel's
/// writability changes arm a timer.
///
/// **CONNECT.** A CONNECT asks for a proxy tunnel: the HTTP decoder hands
/// over its head and then stops parsing, so the request never ends and its
/// answer never completes. This ends the request right after its head (the
/// router then answers it like any unrouted request, in the dialect's
/// shape, journaled), and closes the connection after the answer: nothing
/// after a CONNECT head is HTTP the server should read. (NIO's encoder sends
/// no body in any answer to a CONNECT, RFC 9110's rule for a 2xx one: the
/// answer is the status and the journal's line, without a `Content-Type`.)
///
/// **A head that cannot be parsed.** A request line or header block the
/// HTTP decoder refuses gets the dialect's `malformed_framing` answer, in
/// its shape, and the connection closes (Hummingbird's own is a bare 400).
/// A decoder error inside a request (its body's framing) is left to the
/// route reading it, which answers the same way and journals it.
final class RequestGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    // NIO calls a handler only on its channel's event loop and never
    // re-entrantly on these fields, so the dynamic exclusivity check Swift
    // would make on every access (~10 per request, ~100 instructions each)
    // is switched off for them.
    private let timeout: TimeAmount
    @exclusivity(unchecked) private var timer: Scheduled<Void>?
    /// True while a request (or the first one, from the connection's start) is owed.
    @exclusivity(unchecked) private var owed = false
    /// When the owed request last made progress.
    @exclusivity(unchecked) private var lastProgress = NIODeadline.uptimeNanoseconds(0)
    /// A CONNECT or an unparsable head came: nothing after it is read, and
    /// the connection closes once it is answered.
    @exclusivity(unchecked) private var readingStopped = false
    /// Since when the channel has been unwritable (the client reads nothing), and the timer that checks it.
    @exclusivity(unchecked) private var stalledSince: NIODeadline?
    @exclusivity(unchecked) private var writeTimer: Scheduled<Void>?
    /// Between a request's head and its end, and between an answer's head and its end.
    @exclusivity(unchecked) private var inRequest = false
    @exclusivity(unchecked) private var answering = false
    /// The answer to a request head that cannot be parsed.
    private let unparsable: HTTPResponse
    private let unparsableBody: ByteBuffer

    /// `unparsable`: the dialect's answer to a request head that cannot be parsed, and its body.
    init(timeout: TimeAmount, unparsable: (head: HTTPResponse, body: ByteBuffer)) {
        self.timeout = timeout
        var head = unparsable.head
        head.headerFields[.connection] = "close"
        head.headerFields[.contentLength] = String(unparsable.body.readableBytes)
        self.unparsable = head
        self.unparsableBody = unparsable.body
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError, !inRequest, !answering, !readingStopped else { return context.fireErrorCaught(error) }
        // Nothing after an unparsable head can be framed: answer, then close.
        readingStopped = true
        owed = false
        context.write(wrapOutboundOut(.head(unparsable)), promise: nil)
        context.write(wrapOutboundOut(.body(unparsableBody)), promise: nil)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in loopBound.value.close(promise: nil) }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The first request line is owed from the moment the connection opens.
        if context.channel.isActive { progress(context) }
        // The HTTP version is gone after the codec to HTTPTypes: HTTP/1.0's rule is applied before it.
        let pipeline = context.pipeline.syncOperations
        if let codec = try? pipeline.handler(type: HTTP1ToHTTPServerCodec.self) {
            try? pipeline.addHandler(HTTP10ConnectionClose(), position: .before(codec))
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        progress(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if readingStopped { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            progress(context)
            inRequest = true
            if head.method == .connect {
                readingStopped = true
                owed = false
                context.fireChannelRead(data)
                context.fireChannelRead(wrapInboundOut(.end(nil)))
                return
            }
        case .body: progress(context)
        case .end:
            owed = false
            inRequest = false
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        switch part {
        case .head: answering = true
        case .end: answering = false
        case .body: break
        }
        guard readingStopped else { return context.write(data, promise: promise) }
        switch part {
        case .head(var head):
            head.headerFields[.connection] = "close"
            // NIO sends no body to a CONNECT, so the answer names no body type.
            head.headerFields[.contentType] = nil
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            context.writeAndFlush(data, promise: promise)
            context.close(promise: nil)
        case .body:
            context.write(data, promise: promise)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stalledSince = nil
        } else if stalledSince == nil {
            stalledSince = .now()
            if writeTimer == nil { armWrite(context, in: timeout) }
        }
        context.fireChannelWritabilityChanged()
    }

    private func armWrite(_ context: ChannelHandlerContext, in delay: TimeAmount) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        writeTimer = context.eventLoop.scheduleTask(in: delay) {
            let (handler, context) = loopBound.value
            handler.writeTimer = nil
            guard let since = handler.stalledSince else { return }
            let left = handler.timeout - (.now() - since)
            if left > .zero {
                handler.armWrite(context, in: left)
            } else {
                context.close(promise: nil)
            }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    private func stop() {
        owed = false
        timer?.cancel()
        timer = nil
        stalledSince = nil
        writeTimer?.cancel()
        writeTimer = nil
    }

    private func progress(_ context: ChannelHandlerContext) {
        owed = true
        lastProgress = .now()
        if timer == nil { arm(context, in: timeout) }
    }

    private func arm(_ context: ChannelHandlerContext, in delay: TimeAmount) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: delay) {
            let (handler, context) = loopBound.value
            handler.timer = nil
            guard handler.owed else { return }
            let left = handler.timeout - (.now() - handler.lastProgress)
            if left > .zero {
                handler.arm(context, in: left)
            } else {
                context.close(promise: nil)
            }
        }
    }
}

/// An HTTP/1.0 request without `Connection: keep-alive` ends its connection
/// after the answer (RFC 9112 section 9.3): Hummingbird, which sees only
/// HTTPTypes (no version), closes on `Connection: close`, so that is what
/// such a request is given here. Without it the connection stayed open and
/// a 1.0 client waiting for the close to end the answer hung.
final class HTTP10ConnectionClose: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(var head) = unwrapInboundIn(data), head.version.major == 1, head.version.minor == 0, !head.isKeepAlive {
            head.headers.replaceOrAdd(name: "connection", value: "close")
            return context.fireChannelRead(wrapInboundOut(.head(head)))
        }
        context.fireChannelRead(data)
    }
}
