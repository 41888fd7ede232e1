test matrix                                                             KEY     
             5             1             2             2
IZA                        3             3             5             0
(4I3)           (4I3)           (3I12)              
  1  3  5  6
  1  2  2  3
  3
           0          -2           0
           4           0
