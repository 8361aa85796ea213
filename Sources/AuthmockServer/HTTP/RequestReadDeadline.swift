import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request stops arriving: the head not complete,
/// or the body stalled, for `timeout` with no new part. Hummingbird's idle
/// timeout covers the time between requests; this covers the time inside
/// one, which a stalled client would otherwise hold (with its descriptor,
/// and shutdown waiting on it) forever. A request that has fully arrived is
/// never cut off, however long its answer takes (a delay fault holds it).
final class RequestReadDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    /// True between a request's end and the next bytes: nothing is owed.
    private var betweenRequests = false

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The first request line is owed from the moment the connection opens.
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head, .body:
            betweenRequests = false
            arm(context)
        case .end:
            betweenRequests = true
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    private func arm(_ context: ChannelHandlerContext) {
        deadline?.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            let (handler, context) = loopBound.value
            handler.deadline = nil
            guard !handler.betweenRequests else { return }
            context.close(promise: nil)
        }
    }
}
