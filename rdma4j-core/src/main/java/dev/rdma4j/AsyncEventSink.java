package dev.rdma4j;

/** An object that takes asynchronous events routed to it (the SRQ, which lives in a later layer). */
interface AsyncEventSink {
    void dispatch(AsyncEvent e);
}
