/* bonds_structs.h — a C header in the style of a bond-pricing benchmark:
 * typedef'd anonymous structs, one a kernel takes by value, one only
 * through a pointer (issue 31 #7). */
#ifndef BONDS_STRUCTS_H
#define BONDS_STRUCTS_H

typedef double dataType;

typedef struct {
    int refDate;
    dataType rate;
    int compounding;
} bondsYieldTermStruct;

typedef struct {
    int month;
    int day;
    int year;
} bondsDateStruct;

typedef struct {
    bondsDateStruct issueDate;
    bondsDateStruct maturityDate;
    dataType rate;
} bondStruct;

#endif
