! A Fortran 2008 PMIx client using the pmix_f08 module (include/pmix_f08.f90),
! run as a 2-process job: `fastpmix run -n 2 f_client`. tests/c_fortran.rs
! checks what it prints, one line per fact:
!   sizes proc= value= info=                  c_sizeof of the bind(C) types
!   sizes2 data_array= byte_object=
!   offsets proc.rank= value.data= info.flags= info.value=
!   links all= resolved=                      every interface's C symbol linked
!   init rc= initialized= rank_valid=
!   version <PMIx_Get_version>
!   errstr <code> <PMIx_Error_string(code)>
!   get rank rc= type= value= matches_init=   PMIx_Get of PMIX_RANK (own proc)
!   get job_size rc= type= value=             PMIX_JOB_SIZE (wildcard rank)
!   get nspace rc= matches_init=              PMIX_NSPACE (a string value)
!   get missing rc=                           an unknown key
!   register ref=                             blocking registration, one code
!   fence1 rc=
!   notify rc=                                (rank 0) the custom code, to the namespace
!   event status= source_rank= same_nspace= text= ninfo= nresults= ref_matches= calls=
!   log rc=                                   PMIx_Log to PMIX_LOG_STDOUT
!   heartbeat_monitor rc=                     PMIx_Process_monitor(PMIX_SEND_HEARTBEAT)
!   alloc_external rc=                        PMIx_Allocation_request(PMIX_ALLOC_EXTERNAL)
!   jobctl_badtype rc= nresults=              PMIx_Job_control, a string PMIX_JOB_CTRL_SIGNAL
!   fence_nb rc= cb_status= cb_data_ok= cb_calls=   the callback is a Fortran procedure
!   deregister rc=
!   finalize rc= initialized=
!   done
! A broken expectation prints "FAIL <what>" and stops with status 1.
module f_client_events
    use, intrinsic :: iso_c_binding
    use pmix_f08
    implicit none

    ! A code of our own, below the Standard's range.
    integer(c_int), parameter :: CUSTOM_CODE = PMIX_EXTERNAL_ERR_BASE - 77_c_int

    type(pmix_proc_t), save :: me

    ! Written by the handler (a library thread), read by the main program.
    integer(c_int), volatile, save :: ev_calls = 0
    integer(c_int), volatile, save :: ev_status = 0
    integer(c_int32_t), volatile, save :: ev_rank = -1
    integer(c_size_t), volatile, save :: ev_ref = 0, ev_ninfo = 0, ev_nresults = 99
    logical, volatile, save :: ev_same_nspace = .false.
    character(len=128), volatile, save :: ev_text = "-"

    ! Written by the Fence_nb callback.
    integer(c_int), volatile, save :: op_calls = 0
    integer(c_int), volatile, save :: op_status = 1
    logical, volatile, save :: op_cbdata_ok = .false.
    ! What the Fence_nb caller passes as cbdata; the callback must get it back.
    integer(c_int), target, save :: op_marker = 42

    interface
        function usleep(usec) bind(C, name="usleep") result(rc)
            import :: c_int
            integer(c_int), value :: usec
            integer(c_int) :: rc
        end function usleep
    end interface

contains

    ! The event handler (pmix_notification_fn): records what it got, then
    ! completes the event through the library's completion function.
    subroutine on_event(ref, status, source, info, ninfo, results, nresults, cbfunc, cbdata) &
        bind(C)
        integer(c_size_t), value :: ref
        integer(c_int), value :: status
        type(c_ptr), value :: source
        type(c_ptr), value :: info
        integer(c_size_t), value :: ninfo
        type(c_ptr), value :: results
        integer(c_size_t), value :: nresults
        type(c_funptr), value :: cbfunc
        type(c_ptr), value :: cbdata
        type(pmix_proc_t), pointer :: src
        type(pmix_info_t), pointer :: infos(:)
        procedure(pmix_event_notification_cbfunc_fn), pointer :: done
        integer(c_size_t) :: i

        ev_status = status
        ev_ref = ref
        ev_ninfo = ninfo
        ev_nresults = nresults
        if (nresults > 0 .and. .not. c_associated(results)) ev_nresults = -1
        if (c_associated(source)) then
            call c_f_pointer(source, src)
            ev_rank = src%rank
            ev_same_nspace = pmix_string_from_chars(src%nspace) == pmix_string_from_chars(me%nspace)
        end if
        if (ninfo > 0 .and. c_associated(info)) then
            call c_f_pointer(info, infos, [ninfo])
            do i = 1, ninfo
                if (pmix_check_key(infos(i), PMIX_EVENT_TEXT_MESSAGE)) then
                    ev_text = pmix_value_string(infos(i)%value)
                end if
            end do
        end if
        if (c_associated(cbfunc)) then
            call c_f_procpointer(cbfunc, done)
            call done(PMIX_EVENT_ACTION_COMPLETE, c_null_ptr, 0_c_size_t, c_null_funptr, &
                      c_null_ptr, cbdata)
        end if
        ev_calls = ev_calls + 1
    end subroutine on_event

    ! A pmix_op_cbfunc.
    subroutine on_op(status, cbdata) bind(C)
        integer(c_int), value :: status
        type(c_ptr), value :: cbdata
        op_status = status
        op_cbdata_ok = c_associated(cbdata, c_loc(op_marker))
        op_calls = op_calls + 1
    end subroutine on_op

    subroutine say(line)
        use, intrinsic :: iso_fortran_env, only: output_unit
        character(len=*), intent(in) :: line
        write (output_unit, '(a)') line
        flush (output_unit)
    end subroutine say

    subroutine fail(what)
        character(len=*), intent(in) :: what
        call say("FAIL "//what)
        error stop 1
    end subroutine fail

    ! Waits until counter >= want; .false. after 30 s (a hang guard).
    function wait_until(counter, want) result(ok)
        integer(c_int), volatile :: counter
        integer(c_int), intent(in) :: want
        logical :: ok
        integer(c_int64_t) :: t0, t, rate
        integer(c_int) :: rc
        call system_clock(t0, rate)
        ok = .true.
        do while (counter < want)
            call system_clock(t)
            if (t - t0 > 30_c_int64_t*rate) then
                ok = .false.
                return
            end if
            rc = usleep(2000_c_int)
        end do
    end function wait_until

    function addr(p) result(a)
        type(c_ptr), intent(in) :: p
        integer(c_intptr_t) :: a
        a = transfer(p, a)
    end function addr

end module f_client_events

program f_client
    use, intrinsic :: iso_c_binding
    use pmix_f08
    use f_client_events
    implicit none

    character(len=512) :: line
    integer(c_int) :: rc, ref
    integer :: i, nres
    logical :: ok
    type(pmix_proc_t), target :: probe_proc, wild
    type(pmix_value_t), target :: probe_value
    type(pmix_info_t), target :: probe_info
    type(pmix_data_array_t) :: probe_array
    type(pmix_byte_object_t) :: probe_bytes
    type(pmix_info_t), target :: reg_info(1), ev_info(1), log_data(1), mon, dirs(1)
    integer(c_int), target :: codes(1)
    integer(c_int64_t) :: n
    type(c_ptr) :: vp, results
    integer(c_size_t) :: nresults
    type(pmix_value_t), pointer :: v
    type(c_funptr) :: fns(36)

    ! ---- layouts ----
    write (line, '(a,i0,a,i0,a,i0)') "sizes proc=", c_sizeof(probe_proc), " value=", &
        c_sizeof(probe_value), " info=", c_sizeof(probe_info)
    call say(trim(line))
    write (line, '(a,i0,a,i0)') "sizes2 data_array=", c_sizeof(probe_array), " byte_object=", &
        c_sizeof(probe_bytes)
    call say(trim(line))
    write (line, '(a,i0,a,i0,a,i0,a,i0)') &
        "offsets proc.rank=", addr(c_loc(probe_proc%rank)) - addr(c_loc(probe_proc)), &
        " value.data=", addr(c_loc(probe_value%data)) - addr(c_loc(probe_value)), &
        " info.flags=", addr(c_loc(probe_info%flags)) - addr(c_loc(probe_info)), &
        " info.value=", addr(c_loc(probe_info%value)) - addr(c_loc(probe_info))
    call say(trim(line))

    ! ---- every interface's symbol resolves in libfastpmix ----
    fns = [c_funloc(PMIx_Init), c_funloc(PMIx_Finalize), c_funloc(PMIx_Initialized), &
           c_funloc(PMIx_Get_version), c_funloc(PMIx_Error_string), c_funloc(PMIx_Abort), &
           c_funloc(PMIx_Get), c_funloc(PMIx_Get_nb), c_funloc(PMIx_Fence), &
           c_funloc(PMIx_Fence_nb), c_funloc(PMIx_Register_event_handler), &
           c_funloc(PMIx_Deregister_event_handler), c_funloc(PMIx_Notify_event), &
           c_funloc(PMIx_Allocation_request), c_funloc(PMIx_Allocation_request_nb), &
           c_funloc(PMIx_Job_control), c_funloc(PMIx_Job_control_nb), &
           c_funloc(PMIx_Process_monitor), c_funloc(PMIx_Process_monitor_nb), &
           c_funloc(PMIx_Heartbeat), c_funloc(PMIx_Log), c_funloc(PMIx_Log_nb), &
           c_funloc(PMIx_Info_create), c_funloc(PMIx_Info_construct), &
           c_funloc(PMIx_Info_destruct), c_funloc(PMIx_Info_free), c_funloc(PMIx_Info_load), &
           c_funloc(PMIx_Info_xfer), c_funloc(PMIx_Value_free), c_funloc(PMIx_Value_load), &
           c_funloc(PMIx_Value_unload), c_funloc(PMIx_Proc_create), c_funloc(PMIx_Proc_free), &
           c_funloc(PMIx_Data_array_create), c_funloc(PMIx_Info_list_start), &
           c_funloc(PMIx_Info_list_release)]
    write (line, '(a,i0,a,i0)') "links all=", size(fns), " resolved=", &
        count([(c_associated(fns(i)), i=1, size(fns))])
    call say(trim(line))

    ! ---- init ----
    if (PMIx_Initialized() /= 0) call fail("initialized before PMIx_Init")
    rc = PMIx_Init(me, c_null_ptr, 0_c_size_t)
    write (line, '(a,i0,a,i0,a,l1)') "init rc=", rc, " initialized=", PMIx_Initialized(), &
        " rank_valid=", pmix_rank_is_valid(me%rank)
    call say(trim(line))
    if (rc /= PMIX_SUCCESS) call fail("PMIx_Init")
    call say("version "//pmix_string_from_c(PMIx_Get_version()))
    write (line, '(a,i0,a)') "errstr ", PMIX_ERR_NOT_FOUND, " "// &
        pmix_string_from_c(PMIx_Error_string(PMIX_ERR_NOT_FOUND))
    call say(trim(line))

    ! ---- PMIx_Get ----
    rc = PMIx_Get(me, PMIX_RANK, c_null_ptr, 0_c_size_t, vp)
    if (rc == PMIX_SUCCESS) then
        call c_f_pointer(vp, v)
        n = pmix_value_integer(v, ok)
        write (line, '(a,i0,a,i0,a,i0,a,l1)') "get rank rc=", rc, " type=", v%type, &
            " value=", n, " matches_init=", ok .and. n == int(me%rank, c_int64_t)
        call PMIx_Value_free(vp, 1_c_size_t)
    else
        write (line, '(a,i0)') "get rank rc=", rc
    end if
    call say(trim(line))

    wild = me
    wild%rank = PMIX_RANK_WILDCARD
    rc = PMIx_Get(wild, PMIX_JOB_SIZE, c_null_ptr, 0_c_size_t, vp)
    if (rc == PMIX_SUCCESS) then
        call c_f_pointer(vp, v)
        n = pmix_value_integer(v, ok)
        if (.not. ok) n = -1
        write (line, '(a,i0,a,i0,a,i0)') "get job_size rc=", rc, " type=", v%type, " value=", n
        call PMIx_Value_free(vp, 1_c_size_t)
    else
        write (line, '(a,i0)') "get job_size rc=", rc
    end if
    call say(trim(line))

    rc = PMIx_Get(wild, PMIX_NSPACE, c_null_ptr, 0_c_size_t, vp)
    if (rc == PMIX_SUCCESS) then
        call c_f_pointer(vp, v)
        write (line, '(a,i0,a,l1)') "get nspace rc=", rc, " matches_init=", &
            pmix_value_string(v) == pmix_string_from_chars(me%nspace)
        call PMIx_Value_free(vp, 1_c_size_t)
    else
        write (line, '(a,i0)') "get nspace rc=", rc
    end if
    call say(trim(line))

    rc = PMIx_Get(me, "fortran.no.such.key"//c_null_char, c_null_ptr, 0_c_size_t, vp)
    write (line, '(a,i0)') "get missing rc=", rc
    call say(trim(line))

    ! ---- a handler for our own code, named ----
    codes(1) = CUSTOM_CODE
    rc = pmix_info_load_string(reg_info(1), PMIX_EVENT_HDLR_NAME, "fortran-handler")
    if (rc /= PMIX_SUCCESS) call fail("loading the handler name")
    ref = PMIx_Register_event_handler(c_loc(codes), 1_c_size_t, c_loc(reg_info), 1_c_size_t, &
                                      c_funloc(on_event), c_null_funptr, c_null_ptr)
    call PMIx_Info_destruct(reg_info(1))
    write (line, '(a,i0)') "register ref=", ref
    call say(trim(line))
    if (ref < 1) call fail("PMIx_Register_event_handler")

    ! Everyone has registered after this fence.
    rc = PMIx_Fence(c_null_ptr, 0_c_size_t, c_null_ptr, 0_c_size_t)
    write (line, '(a,i0)') "fence1 rc=", rc
    call say(trim(line))

    if (me%rank == 0) then
        rc = pmix_info_load_string(ev_info(1), PMIX_EVENT_TEXT_MESSAGE, "hello from fortran")
        if (rc /= PMIX_SUCCESS) call fail("loading the event text")
        rc = PMIx_Notify_event(CUSTOM_CODE, c_null_ptr, PMIX_RANGE_NAMESPACE, c_loc(ev_info), &
                               1_c_size_t, c_null_funptr, c_null_ptr)
        call PMIx_Info_destruct(ev_info(1))
        write (line, '(a,i0)') "notify rc=", rc
        call say(trim(line))
    end if

    ! Every rank's handler runs once: rank 1's for the other rank's event,
    ! rank 0's for its own (a source's local chain runs in-process).
    if (.not. wait_until(ev_calls, 1_c_int)) call fail("the handler never ran")
    write (line, '(a,i0,a,i0,a,l1,a,a,a,i0,a,i0,a,l1,a,i0)') "event status=", ev_status, &
        " source_rank=", ev_rank, " same_nspace=", ev_same_nspace, " text=", trim(ev_text), &
        " ninfo=", ev_ninfo, " nresults=", ev_nresults, " ref_matches=", &
        ev_ref == int(ref, c_size_t), " calls=", ev_calls
    call say(trim(line))

    ! ---- job management calls through the module ----
    write (line, '(a,i0)') "fortran-log rank ", me%rank
    rc = pmix_info_load_string(log_data(1), PMIX_LOG_STDOUT, trim(line))
    if (rc /= PMIX_SUCCESS) call fail("loading the log line")
    rc = PMIx_Log(c_loc(log_data), 1_c_size_t, c_null_ptr, 0_c_size_t)
    call PMIx_Info_destruct(log_data(1))
    write (line, '(a,i0)') "log rc=", rc
    call say(trim(line))

    call PMIx_Heartbeat()
    rc = PMIx_Info_load(mon, PMIX_SEND_HEARTBEAT, c_null_ptr, PMIX_POINTER)
    if (rc /= PMIX_SUCCESS) call fail("loading PMIX_SEND_HEARTBEAT")
    rc = PMIx_Process_monitor(mon, PMIX_MONITOR_HEARTBEAT_ALERT, c_null_ptr, 0_c_size_t, &
                              results, nresults)
    call PMIx_Info_destruct(mon)
    if (c_associated(results)) call PMIx_Info_free(results, nresults)
    write (line, '(a,i0)') "heartbeat_monitor rc=", rc
    call say(trim(line))

    results = c_null_ptr
    nresults = 0
    rc = PMIx_Allocation_request(PMIX_ALLOC_EXTERNAL, c_null_ptr, 0_c_size_t, results, nresults)
    if (c_associated(results)) call PMIx_Info_free(results, nresults)
    write (line, '(a,i0)') "alloc_external rc=", rc
    call say(trim(line))

    ! PMIX_JOB_CTRL_SIGNAL is an int: a string is a bad parameter.
    rc = pmix_info_load_string(dirs(1), PMIX_JOB_CTRL_SIGNAL, "SIGTERM")
    results = c_null_ptr
    nresults = 0
    rc = PMIx_Job_control(c_null_ptr, 0_c_size_t, c_loc(dirs), 1_c_size_t, results, nresults)
    call PMIx_Info_destruct(dirs(1))
    nres = int(nresults)
    if (c_associated(results)) call PMIx_Info_free(results, nresults)
    write (line, '(a,i0,a,i0)') "jobctl_badtype rc=", rc, " nresults=", nres
    call say(trim(line))

    ! ---- a non-blocking fence whose callback is Fortran ----
    rc = PMIx_Fence_nb(c_null_ptr, 0_c_size_t, c_null_ptr, 0_c_size_t, c_funloc(on_op), &
                       c_loc(op_marker))
    if (rc == PMIX_SUCCESS) then
        if (.not. wait_until(op_calls, 1_c_int)) call fail("the Fence_nb callback never ran")
    end if
    write (line, '(a,i0,a,i0,a,l1,a,i0)') "fence_nb rc=", rc, " cb_status=", op_status, &
        " cb_data_ok=", op_cbdata_ok, " cb_calls=", op_calls
    call say(trim(line))

    rc = PMIx_Deregister_event_handler(int(ref, c_size_t), c_null_funptr, c_null_ptr)
    write (line, '(a,i0)') "deregister rc=", rc
    call say(trim(line))

    rc = PMIx_Finalize(c_null_ptr, 0_c_size_t)
    write (line, '(a,i0,a,i0)') "finalize rc=", rc, " initialized=", PMIx_Initialized()
    call say(trim(line))
    call say("done")
end program f_client
