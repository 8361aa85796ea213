import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request stops arriving: the head not complete,
/// or the body stalled, for `timeout` with no new part. Hummingbird's idle
/// timeout covers the time between requests; this covers the time inside
/// one, which a stalled client would otherwise hold (with its descriptor,
/// and shutdown waiting on it) forever. A request that has fully arrived is
/// never cut off, however long its answer takes (a delay fault holds it).
///
/// Per request it only notes the time: one timer per connection checks the
/// last progress when it fires and re-arms for what is left (as NIO's
/// IdleStateHandler does). Scheduling and cancelling a timer on every
/// request cost more than the rest of the handler chain (bench/README.md).
final class RequestReadDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?
    /// True while a request (or the first one, from the connection's start) is owed.
    private var owed = false
    /// When the owed request last made progress.
    private var lastProgress = NIODeadline.uptimeNanoseconds(0)

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The first request line is owed from the moment the connection opens.
        if context.channel.isActive { progress(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        progress(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head, .body: progress(context)
        case .end: owed = false
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    private func stop() {
        owed = false
        timer?.cancel()
        timer = nil
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
